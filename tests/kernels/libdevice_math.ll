; NVVM IR (typed pointers, as libNVVM reads text IR) that calls libdevice: s[i] = sinf(x[i]),
; e[i] = expf(x[i]) through __nv_sinf and __nv_expf, for i < n.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare float @__nv_sinf(float)
declare float @__nv_expf(float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @math(float addrspace(1)* %x, float addrspace(1)* %s, float addrspace(1)* %e, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %d = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %bd = mul i32 %b, %d
  %i = add i32 %bd, %t
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %i64 = sext i32 %i to i64
  %px = getelementptr float, float addrspace(1)* %x, i64 %i64
  %v = load float, float addrspace(1)* %px
  %sv = call float @__nv_sinf(float %v)
  %ev = call float @__nv_expf(float %v)
  %ps = getelementptr float, float addrspace(1)* %s, i64 %i64
  store float %sv, float addrspace(1)* %ps
  %pe = getelementptr float, float addrspace(1)* %e, i64 %i64
  store float %ev, float addrspace(1)* %pe
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, float addrspace(1)*, i32)* @math, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 2}
