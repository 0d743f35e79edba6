/* A program outside the project that uses the installed cucore. */
#include <cucore.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  cucore_versions_info v;
  if (cucore_versions(&v) != CUCORE_OK) return 1;
  if (strcmp(v.cucore, CUCORE_VERSION_STRING) != 0) return 2;
  if (strcmp(cucore_status_name(CUCORE_ARG_COUNT), "CUCORE_ARG_COUNT") != 0) return 3;
  printf("cucore %s\n", v.cucore);
  return 0;
}
