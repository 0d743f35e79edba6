#!/usr/bin/env python3
"""dlpack_peers.py LIBCUCORE -- cucore's DLPack side by side with PyTorch's and CuPy's (label gpu,
run by tests/cli/gpu_dlpack_torch.sh).

Through ctypes on libcucore.so, as a C extension would through the Python C API:
- cucore exports: a cucore allocation offered through `__dlpack__`, whose capsule is made by
  cucore_dlpack_export_max_version from the `max_version` the consumer passes (a versioned
  "dltensor_versioned" capsule for 1.x, a legacy "dltensor" one otherwise), read by
  torch.from_dlpack and cupy.from_dlpack; the values compared, the consumer's write seen by
  cucore, and the export's hold on the allocation checked to end when the consumer lets go (the
  deleter ran). A producer that knows no max_version (raising TypeError, as pre-1.0 producers
  do) is read by both too: the 0.x export, unchanged.
- cucore imports: torch's and CuPy's `__dlpack__(max_version=(1, 0))` capsules (versioned) and
  their plain `__dlpack__()` ones (legacy), through cucore_dlpack_import_versioned and
  cucore_dlpack_import; values read by cucore compared, cucore's write seen by the peer, the
  capsule renamed "used_..." as the protocol says, released through cucore.

libcucore.so must be preloaded (LD_PRELOAD; the wrapper does it): its initial-exec TLS cannot be
dlopened into a running Python. Exit 0 when every check passes, 1 on a failure, 77 (skipped) when torch or cupy cannot be
imported or no GPU is usable; also 77 when neither peer negotiates DLPack 1.x (too old), after
the legacy checks passed.
"""
import ctypes as C
import gc
import sys

SKIP = 77
failures = []


def skip(why):
    print("skipped: " + why)
    sys.exit(SKIP)


def check(what, cond, detail=""):
    if cond:
        print("ok: " + what)
    else:
        print("FAIL: " + what + (" (" + detail + ")" if detail else ""))
        failures.append(what)


try:
    import torch
except Exception as e:  # noqa: BLE001 -- any import failure means: not here
    skip("torch is not importable (%s)" % e)
try:
    import cupy
except Exception as e:  # noqa: BLE001
    skip("cupy is not importable (%s)" % e)
if not torch.cuda.is_available():
    skip("torch sees no CUDA device")

# ---- cucore's public types, as include/cucore/memory.h lays them out ----------------------------

MAX_DIMS = 16


class Dtype(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class Desc(C.Structure):
    _fields_ = [("ndim", C.c_int), ("shape", C.c_int64 * MAX_DIMS),
                ("strides", C.c_int64 * MAX_DIMS), ("compact", C.c_int), ("dtype", Dtype),
                ("byte_offset", C.c_uint64)]


class Info(C.Structure):
    _fields_ = [("data", C.c_uint64), ("device_type", C.c_int), ("device_id", C.c_int),
                ("desc", Desc), ("span_bytes", C.c_uint64)]


class Version(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


# ---- DLPack's structs (dlpack.h 1.x), to call a tensor's deleter from a capsule destructor ---


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device_type", C.c_int), ("device_id", C.c_int),
                ("ndim", C.c_int), ("dtype", Dtype), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", C.CFUNCTYPE(None, C.POINTER(DLManagedTensor)))]


class DLManagedTensorVersioned(C.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", Version), ("manager_ctx", C.c_void_p),
    ("deleter", C.CFUNCTYPE(None, C.POINTER(DLManagedTensorVersioned))), ("flags", C.c_uint64),
    ("dl_tensor", DLTensor)]

# ---- the library and the capsule calls ----------------------------------------------------------

lib = C.CDLL(sys.argv[1])
lib.cucore_last_error.restype = C.c_char_p
lib.cucore_device_open.argtypes = [C.c_int, C.POINTER(C.c_void_p)]
lib.cucore_mem_alloc.argtypes = [C.c_void_p, C.c_size_t, C.POINTER(C.c_uint64)]
lib.cucore_mem_free.argtypes = [C.c_void_p, C.c_uint64]
lib.cucore_memcpy_htod.argtypes = [C.c_void_p, C.c_uint64, C.c_void_p, C.c_size_t, C.c_void_p]
lib.cucore_memcpy_dtoh.argtypes = [C.c_void_p, C.c_void_p, C.c_uint64, C.c_size_t, C.c_void_p]
lib.cucore_device_synchronize.argtypes = [C.c_void_p]
lib.cucore_dlpack_export_max_version.argtypes = [C.c_uint64, C.POINTER(Desc), C.c_uint, Version,
                                                 C.POINTER(C.c_void_p), C.POINTER(Version)]
lib.cucore_dlpack_export.argtypes = [C.c_uint64, C.POINTER(Desc), C.c_uint,
                                     C.POINTER(C.c_void_p)]
lib.cucore_dlpack_import.argtypes = [C.c_void_p, C.POINTER(C.c_void_p)]
lib.cucore_dlpack_import_versioned.argtypes = [C.c_void_p, C.POINTER(C.c_void_p)]
lib.cucore_dlpack_get_tensor_info.argtypes = [C.c_void_p, C.POINTER(Info)]
lib.cucore_dlpack_get_version.argtypes = [C.c_void_p, C.POINTER(Version)]
lib.cucore_dlpack_is_read_only.argtypes = [C.c_void_p, C.POINTER(C.c_int)]
lib.cucore_dlpack_release.argtypes = [C.c_void_p]

CUCORE_IN_USE = 39


def code(status):
    return status & 0xff


def ok(status, call):
    if status != 0:
        raise RuntimeError("%s failed: %s" % (call, lib.cucore_last_error().decode()))


api = C.pythonapi
api.PyCapsule_New.restype = C.py_object
api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
api.PyCapsule_GetPointer.restype = C.c_void_p
api.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
api.PyCapsule_GetName.restype = C.c_char_p
api.PyCapsule_GetName.argtypes = [C.py_object]
api.PyCapsule_SetName.restype = C.c_int
api.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
# In the destructor the capsule is being freed: take it as a raw pointer, never as an object.
raw_name = C.PYFUNCTYPE(C.c_char_p, C.c_void_p)(("PyCapsule_GetName", api))
raw_pointer = C.PYFUNCTYPE(C.c_void_p, C.c_void_p, C.c_char_p)(("PyCapsule_GetPointer", api))


@C.CFUNCTYPE(None, C.c_void_p)
def capsule_destructor(capsule):
    """A capsule nobody consumed still owns its tensor: call the deleter (the protocol's rule)."""
    name = raw_name(capsule)
    if name == b"dltensor_versioned":
        mt = C.cast(raw_pointer(capsule, name), C.POINTER(DLManagedTensorVersioned))
        mt.contents.deleter(mt)
    elif name == b"dltensor":
        mt = C.cast(raw_pointer(capsule, name), C.POINTER(DLManagedTensor))
        mt.contents.deleter(mt)


dev = C.c_void_p()
ok(lib.cucore_device_open(0, C.byref(dev)), "cucore_device_open")

N = 4096


def floats_desc(n):
    d = Desc()
    d.ndim = 1
    d.shape[0] = n
    d.compact = 1
    d.dtype = Dtype(2, 32, 1)  # kDLFloat, 32 bits
    return d


def host_floats(values):
    return (C.c_float * len(values))(*values)


class CucoreTensor:
    """A cucore allocation offered through the array API's DLPack protocol."""

    def __init__(self, ptr, n, legacy_only=False):
        self.ptr, self.desc, self.legacy_only, self.made = ptr, floats_desc(n), legacy_only, []

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self.legacy_only and max_version is not None:
            # What a producer older than DLPack 1.0 says; consumers ask again without it.
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        ask = Version(0, 0) if max_version is None else Version(*max_version)
        out, made = C.c_void_p(), Version()
        ok(lib.cucore_dlpack_export_max_version(self.ptr, C.byref(self.desc), 0, ask, C.byref(out),
                                                C.byref(made)), "cucore_dlpack_export_max_version")
        self.made.append((max_version, (made.major, made.minor)))
        name = b"dltensor_versioned" if made.major else b"dltensor"
        return api.PyCapsule_New(out, name, C.cast(capsule_destructor, C.c_void_p))


def export_to(peer, from_dlpack, to_host, legacy_only):
    """cucore's allocation read and written by `peer`; returns the (asked, made) versions."""
    values = [i * 0.5 - 100.0 for i in range(N)]
    ptr = C.c_uint64()
    ok(lib.cucore_mem_alloc(dev, N * 4, C.byref(ptr)), "cucore_mem_alloc")
    ok(lib.cucore_memcpy_htod(dev, ptr.value, host_floats(values), N * 4, None), "htod")
    src = CucoreTensor(ptr.value, N, legacy_only)
    t = from_dlpack(src)
    kind = "legacy" if legacy_only else "negotiated"
    check("%s reads cucore's %s export (%s)" % (peer, kind, src.made), to_host(t) == values)
    check("%s's tensor holds cucore's allocation (free refused)" % peer,
          code(lib.cucore_mem_free(dev, ptr.value)) == CUCORE_IN_USE)
    t[7] = 1234.5  # the consumer writes; cucore reads it
    torch.cuda.synchronize()
    cupy.cuda.runtime.deviceSynchronize()
    back = (C.c_float * N)()
    ok(lib.cucore_memcpy_dtoh(dev, back, ptr.value, N * 4, None), "dtoh")
    check("cucore sees %s's write through the export" % peer, back[7] == 1234.5)
    del t
    gc.collect()
    torch.cuda.synchronize()
    status = lib.cucore_mem_free(dev, ptr.value)
    check("%s's deleter ended the export: the free passes" % peer, status == 0,
          lib.cucore_last_error().decode() if status else "")
    return src.made


def import_from(peer, arr, to_host, max_version):
    """The peer's tensor imported by cucore through its capsule: read, written, released."""
    cap = arr.__dlpack__(max_version=max_version) if max_version else arr.__dlpack__()
    name = api.PyCapsule_GetName(cap)
    versioned = name == b"dltensor_versioned"
    h = C.c_void_p()
    call = lib.cucore_dlpack_import_versioned if versioned else lib.cucore_dlpack_import
    ok(call(api.PyCapsule_GetPointer(cap, name), C.byref(h)), "import of %s's %s" % (peer, name))
    api.PyCapsule_SetName(cap, b"used_" + name)  # cucore owns the tensor now
    info, ver, ro = Info(), Version(), C.c_int(-1)
    ok(lib.cucore_dlpack_get_tensor_info(h, C.byref(info)), "info")
    ok(lib.cucore_dlpack_get_version(h, C.byref(ver)), "version")
    ok(lib.cucore_dlpack_is_read_only(h, C.byref(ro)), "is_read_only")
    check("%s's %s capsule: version %d.%d, read-only %d" % (peer, name.decode(), ver.major,
                                                            ver.minor, ro.value),
          (ver.major == 1) == versioned and info.desc.ndim == 1 and info.device_type == 2)
    n = info.desc.shape[0]
    back = (C.c_float * n)()
    addr = info.data + info.desc.byte_offset
    ok(lib.cucore_memcpy_dtoh(dev, back, addr, n * 4, None), "dtoh")
    check("cucore reads %s's %d floats" % (peer, n), list(back) == to_host(arr))
    ok(lib.cucore_memcpy_htod(dev, addr + 4 * 3, host_floats([-9.25]), 4, None), "htod")
    ok(lib.cucore_device_synchronize(dev), "synchronize")
    check("%s sees cucore's write into its tensor" % peer, to_host(arr)[3] == -9.25)
    over = lib.cucore_memcpy_htod(dev, addr, host_floats([0.0] * (n + 1)), (n + 1) * 4, None)
    check("a copy one float past %s's tensor is refused" % peer, over != 0)
    ok(lib.cucore_dlpack_release(h), "release")  # the peer's deleter: its tensor lives on
    check("%s's tensor outlives cucore's release" % peer, to_host(arr)[0] == arr_first[peer])
    return versioned


def torch_host(t):
    torch.cuda.synchronize()
    return t.detach().cpu().tolist()


def cupy_host(a):
    cupy.cuda.runtime.deviceSynchronize()
    return cupy.asnumpy(a).tolist()


print("torch %s, cupy %s, libcucore %s" % (torch.__version__, cupy.__version__, sys.argv[1]))
made = {}
made["torch"] = export_to("torch", torch.from_dlpack, torch_host, False)
made["cupy"] = export_to("cupy", cupy.from_dlpack, cupy_host, False)
export_to("torch", torch.from_dlpack, torch_host, True)
export_to("cupy", cupy.from_dlpack, cupy_host, True)

arr_first = {"torch": 0.0, "cupy": 0.0}
tt = torch.arange(N, dtype=torch.float32, device="cuda") * 0.25
ca = cupy.arange(N, dtype=cupy.float32) * 0.25
got_versioned = []
for peer, arr, to_host in (("torch", tt, torch_host), ("cupy", ca, cupy_host)):
    import_from(peer, arr, to_host, None)  # the legacy capsule
    try:
        if import_from(peer, arr, to_host, (1, 0)):
            got_versioned.append(peer)
    except TypeError as e:  # a peer too old for max_version
        print("note: %s's __dlpack__ takes no max_version (%s)" % (peer, e))

negotiated = [p for p, m in made.items() if any(v[0] == 1 for _, v in m)]
print("versioned capsules: cucore -> %s; %s -> cucore" % (negotiated or "none",
                                                         got_versioned or "none"))
if failures:
    print("%d checks failed: %s" % (len(failures), "; ".join(failures)))
    sys.exit(1)
if not negotiated and not got_versioned:
    skip("neither torch %s nor cupy %s speaks DLPack 1.x (the legacy checks passed)"
         % (torch.__version__, cupy.__version__))
print("all checks passed")
