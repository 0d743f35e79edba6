/*
 * ipc.c -- pools shared between processes: a pool created with CUCORE_POOL_IPC exported as a
 * POSIX file descriptor and imported elsewhere, its allocations exported as plain bytes
 * (cucore_ipc_pointer: the driver's 64 bytes plus the size, so the importer's copies are
 * bounds-checked), and passing a descriptor over a Unix socket (SCM_RIGHTS).
 */
#define _GNU_SOURCE
#include "memory/memory.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IPC_MAGIC 0x50494343u /* "CCIP" */
#define IPC_VERSION 1u

cucore_status cucore_mem_pool_export_fd(cucore_mem_pool *pool, int *fd) {
  cc_begin();
  const char *fn = "cucore_mem_pool_export_fd";
  CC_CHECK_ARG(fd, fn, "fd");
  *fd = -1;
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  if (!pool->ipc || pool->imported)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool %s; create it with cucore_mem_pool_props.flags = "
                   "CUCORE_POOL_IPC to share it",
                   fn,
                   pool->imported ? "was imported (export it from the process that made it)"
                                  : "was not created for sharing");
  cucore_status st = CC_DRV_REQUIRE(cuMemPoolExportToShareableHandle);
  if (st == CUCORE_OK) st = cc_device_make_current(pool->dev);
  if (st != CUCORE_OK) return st;
  int h = -1;
  CUresult r = DRV(cuMemPoolExportToShareableHandle)(&h, pool->handle,
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolExportToShareableHandle", "a pool of device %d",
                      pool->dev->ordinal);
  *fd = h;
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_import_fd(cucore_device *dev, int fd, cucore_mem_pool **out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_import_fd";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  if (fd < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: file descriptor %d is not valid", fn, fd);
  cucore_status st = CC_DRV_REQUIRE(cuMemPoolImportFromShareableHandle);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUmemoryPool h = NULL;
  CUresult r = DRV(cuMemPoolImportFromShareableHandle)(&h, (void *)(uintptr_t)fd,
                                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolImportFromShareableHandle",
                      "file descriptor %d on device %d (is it a pool exported with "
                      "cucore_mem_pool_export_fd?)",
                      fd, dev->ordinal);
  st = cc_pool_new_handle(dev, h, 1, 1, 1, out);
  if (st != CUCORE_OK && DRV(cuMemPoolDestroy)) (void)DRV(cuMemPoolDestroy)(h);
  return st;
}

cucore_status cucore_mem_pool_export_pointer(cucore_mem_pool *pool, cucore_devptr ptr,
                                             cucore_ipc_pointer *out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_export_pointer";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  if (!pool->ipc || pool->imported)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool is not one this process created with CUCORE_POOL_IPC", fn);
  cc_mem_rec rec;
  if (!cc_reg_find(&cc_mem_registry, ptr, &rec))
    return cc_mem_explain_take(CC_REG_NOT_FOUND, &rec, ptr, fn, "a live allocation of the pool");
  if (rec.base != ptr)
    return cc_mem_explain_take(CC_REG_NOT_BASE, &rec, ptr, fn, "a live allocation of the pool");
  if (!cc_mem_kind_is_pooled(rec.kind) || rec.owner != pool)
    return cc_mem_explain_take(CC_REG_REJECTED, &rec, ptr, fn,
                               "an allocation of this pool (cucore_mem_pool_alloc_async)");
  cucore_status st = CC_DRV_REQUIRE(cuMemPoolExportPointer);
  if (st == CUCORE_OK) st = cc_device_make_current(pool->dev);
  if (st != CUCORE_OK) return st;
  CUmemPoolPtrExportData data;
  memset(&data, 0, sizeof data);
  CUresult r = DRV(cuMemPoolExportPointer)(&data, (CUdeviceptr)ptr);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolExportPointer", "0x%llx", (unsigned long long)ptr);
  memcpy(out->data, data.reserved, sizeof out->data);
  out->bytes = rec.size;
  out->magic = IPC_MAGIC;
  out->version = IPC_VERSION;
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_import_pointer(cucore_mem_pool *pool, const cucore_ipc_pointer *in,
                                             cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_import_pointer";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  CC_CHECK_ARG(in, fn, "in");
  if (!pool->imported)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: pointers are imported through a pool imported with "
                   "cucore_mem_pool_import_fd, not through a pool of this process",
                   fn);
  if (in->magic != IPC_MAGIC || in->version != IPC_VERSION)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the data is not a cucore_ipc_pointer of version %u (magic 0x%x, version "
                   "%u): was it damaged or truncated in transit?",
                   fn, IPC_VERSION, in->magic, in->version);
  if (in->bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the allocation's size is 0", fn);
  cucore_status st = cc_check_size(in->bytes, fn, "the allocation's size");
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemPoolImportPointer);
  if (st == CUCORE_OK) st = cc_device_make_current(pool->dev);
  if (st != CUCORE_OK) return st;
  CUmemPoolPtrExportData data;
  memcpy(data.reserved, in->data, sizeof data.reserved);
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemPoolImportPointer)(&p, pool->handle, &data);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolImportPointer",
                      "a %llu-byte allocation (is the exporter's allocation still live and "
                      "complete?)",
                      (unsigned long long)in->bytes);
  cc_mem_rec rec = {.base = p,
                    .size = in->bytes,
                    .kind = CUCORE_MEM_IPC_IMPORTED,
                    .ordinal = pool->dev->ordinal,
                    .ctx = pool->dev->ctx,
                    .cupool = pool->handle,
                    .owner = pool};
  st = cc_mem_record_or_free(&rec, fn);
  if (st != CUCORE_OK) return st;
  *out = p;
  return CUCORE_OK;
}

/* ---- descriptors over Unix sockets ----------------------------------------------------------- */

static cucore_status io_fail(const char *fn, const char *what) {
  int e = errno;
  return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, e), "%s: %s: %s", fn, what,
                 strerror(e));
}

/* One message that carries a descriptor: the data (a dummy byte when there is none, since a
 * message must carry one) and room for one descriptor in the control data. Set up in place by
 * fd_message_init (msg points into the struct: not to be copied). */
typedef struct fd_message {
  char dummy;
  struct iovec iov;
  struct {
    _Alignas(struct cmsghdr) char buf[CMSG_SPACE(sizeof(int))];
  } ctl;
  struct msghdr msg;
} fd_message;

static void fd_message_init(fd_message *m, void *data, size_t bytes) {
  memset(m, 0, sizeof *m);
  m->iov.iov_base = bytes ? data : &m->dummy;
  m->iov.iov_len = bytes ? bytes : 1;
  m->msg.msg_iov = &m->iov;
  m->msg.msg_iovlen = 1;
  m->msg.msg_control = m->ctl.buf;
  m->msg.msg_controllen = sizeof m->ctl.buf;
}

cucore_status cucore_ipc_send_fd(int sock, int fd, const void *data, size_t bytes) {
  cc_begin();
  const char *fn = "cucore_ipc_send_fd";
  if (sock < 0 || fd < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: socket %d and descriptor %d must be >= 0", fn,
                   sock, fd);
  if (bytes && !data) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `data` is NULL", fn);
  fd_message m;
  fd_message_init(&m, (void *)(uintptr_t)data, bytes);
  struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t n;
  do n = sendmsg(sock, &m.msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return io_fail(fn, "sendmsg");
  /* The descriptor went with the first byte; the rest of the data follows plainly. */
  size_t sent = (size_t)n;
  while (bytes && sent < bytes) {
    do n = send(sock, (const char *)data + sent, bytes - sent, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) return io_fail(fn, "send");
    sent += (size_t)n;
  }
  return CUCORE_OK;
}

cucore_status cucore_ipc_recv_fd(int sock, int *fd, void *data, size_t bytes) {
  cc_begin();
  const char *fn = "cucore_ipc_recv_fd";
  CC_CHECK_ARG(fd, fn, "fd");
  *fd = -1;
  if (sock < 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: socket %d is not valid", fn, sock);
  if (bytes && !data) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `data` is NULL", fn);
  fd_message m;
  fd_message_init(&m, data, bytes);
  struct msghdr *msg = &m.msg;
  ssize_t n;
  do n = recvmsg(sock, msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return io_fail(fn, "recvmsg");
  if (n == 0)
    return cc_fail(CUCORE_IO_ERROR, "%s: the peer closed the socket before sending a descriptor",
                   fn);
  int got = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int)))
      memcpy(&got, CMSG_DATA(c), sizeof got);
  if (got < 0)
    return cc_fail(CUCORE_IO_ERROR, "%s: a message came without a file descriptor%s", fn,
                   (msg->msg_flags & MSG_CTRUNC) ? " (its control data was cut: too many "
                                                   "descriptors sent?)"
                                                 : "");
  size_t have = (size_t)n;
  while (bytes && have < bytes) {
    do n = recv(sock, (char *)data + have, bytes - have, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
      cucore_status st = n < 0 ? io_fail(fn, "recv")
                               : cc_fail(CUCORE_IO_ERROR,
                                         "%s: the peer closed the socket after %zu of %zu bytes",
                                         fn, have, bytes);
      close(got);
      return st;
    }
    have += (size_t)n;
  }
  *fd = got;
  return CUCORE_OK;
}
