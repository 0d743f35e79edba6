/*
 * graph_mem.c -- the device's graph memory (the pool behind graph allocation nodes, apart from
 * the stream-ordered pools): its counters (cuDeviceGetGraphMemAttribute), the reset of its
 * high-water marks (cuDeviceSetGraphMemAttribute, which takes only 0) and trimming
 * (cuDeviceGraphMemTrim). Driver calls only, on the device cucore opened.
 */
#include "memory/memory.h"

#include <string.h>

/* The driver and the entry point `which` (0 get, 1 set, 2 trim), with `dev` current. */
static cucore_status enter(cucore_device *dev, int which, const char *fn) {
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK)
    st = which == 0   ? CC_DRV_REQUIRE(cuDeviceGetGraphMemAttribute)
         : which == 1 ? CC_DRV_REQUIRE(cuDeviceSetGraphMemAttribute)
                      : CC_DRV_REQUIRE(cuDeviceGraphMemTrim);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  return st;
}

static const char *attr_name(CUgraphMem_attribute a) {
  switch (a) {
  case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: return "CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT";
  case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: return "CU_GRAPH_MEM_ATTR_USED_MEM_HIGH";
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: return "CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT";
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: return "CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH";
  }
  return "?";
}

cucore_status cucore_device_get_graph_mem_stats(cucore_device *dev, cucore_graph_mem_stats *out) {
  cc_begin();
  const char *fn = "cucore_device_get_graph_mem_stats";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  cucore_status st = enter(dev, 0, fn);
  if (st != CUCORE_OK) return st;
  struct {
    CUgraphMem_attribute a;
    uint64_t *dst;
  } rows[] = {{CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &out->used_current},
              {CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &out->used_high},
              {CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &out->reserved_current},
              {CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &out->reserved_high}};
  for (size_t i = 0; i < CC_ARRAY_LEN(rows); i++) {
    cuuint64_t v = 0;
    CUresult r = DRV(cuDeviceGetGraphMemAttribute)(dev->cudev, rows[i].a, &v);
    if (r != CUDA_SUCCESS) {
      memset(out, 0, sizeof *out);
      return cc_fail_cu(r, "cuDeviceGetGraphMemAttribute", "%s of device %d", attr_name(rows[i].a),
                        dev->ordinal);
    }
    *rows[i].dst = v;
  }
  return CUCORE_OK;
}

cucore_status cucore_device_reset_graph_mem_high_water(cucore_device *dev) {
  cc_begin();
  const char *fn = "cucore_device_reset_graph_mem_high_water";
  cucore_status st = enter(dev, 1, fn);
  if (st != CUCORE_OK) return st;
  const CUgraphMem_attribute marks[] = {CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                                        CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH};
  for (size_t i = 0; i < CC_ARRAY_LEN(marks); i++) {
    cuuint64_t zero = 0;
    CUresult r = DRV(cuDeviceSetGraphMemAttribute)(dev->cudev, marks[i], &zero);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuDeviceSetGraphMemAttribute", "%s = 0 (a reset) on device %d",
                        attr_name(marks[i]), dev->ordinal);
  }
  return CUCORE_OK;
}

cucore_status cucore_device_graph_mem_trim(cucore_device *dev) {
  cc_begin();
  const char *fn = "cucore_device_graph_mem_trim";
  cucore_status st = enter(dev, 2, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuDeviceGraphMemTrim)(dev->cudev);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGraphMemTrim", "device %d", dev->ordinal);
  return CUCORE_OK;
}
