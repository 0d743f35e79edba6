/* devices_attrs.h -- `cucore devices --all-attributes`: every device attribute cucore knows,
 * name = value, read through cucore_device_get_attribute. */
#ifndef CUCORE_TOOLS_DEVICES_ATTRS_H
#define CUCORE_TOOLS_DEVICES_ATTRS_H

#include "cli.h"

/* Lines "    name = value" for device `ordinal` under a heading; an attribute the driver
 * does not answer says why on its line, a deprecated one says so. */
void devices_attrs_text(int ordinal);
/* The object "attributes": {"name": value, ...} of a device's JSON (null for an attribute the
 * driver does not answer), and "attribute_errors": {"name": "why"} when there are any. */
void devices_attrs_json(json_out *j, int ordinal);

#endif /* CUCORE_TOOLS_DEVICES_ATTRS_H */
