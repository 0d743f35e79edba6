/* devices_attrs.c -- `cucore devices --all-attributes`: every attribute of the library's table
 * (cucore_device_attribute_get_info) read on each device, in id order. */
#include "devices_attrs.h"

void devices_attrs_text(int ordinal) {
  printf("  all attributes (cucore_device_get_attribute):\n");
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    cucore_device_attribute_info info;
    if (cucore_device_attribute_get_info(id, &info) != CUCORE_OK) continue;
    int value = 0;
    cucore_status st = cucore_device_get_attribute(ordinal, id, &value);
    if (st == CUCORE_OK)
      printf("    %s = %d%s\n", info.name, value, info.deprecated ? " (deprecated)" : "");
    else
      printf("    %s: not read: %s\n", info.name, cucore_last_error());
  }
}

void devices_attrs_json(json_out *j, int ordinal) {
  int failed = 0;
  json_begin_object(j, "attributes");
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    cucore_device_attribute_info info;
    if (cucore_device_attribute_get_info(id, &info) != CUCORE_OK) continue;
    int value = 0;
    if (cucore_device_get_attribute(ordinal, id, &value) == CUCORE_OK)
      json_int(j, info.name, value);
    else
      json_str(j, info.name, NULL), failed++;
  }
  json_end_object(j);
  if (!failed) return;
  json_begin_object(j, "attribute_errors");
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    cucore_device_attribute_info info;
    int value = 0;
    if (cucore_device_attribute_get_info(id, &info) == CUCORE_OK &&
        cucore_device_get_attribute(ordinal, id, &value) != CUCORE_OK)
      json_str(j, info.name, cucore_last_error());
  }
  json_end_object(j);
}
