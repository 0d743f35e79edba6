/* cmd_inspect.h -- `cucore inspect`: what a cubin, fatbin, PTX file or host object holds. */
#ifndef CUCORE_CMD_INSPECT_H
#define CUCORE_CMD_INSPECT_H

/* Runs the verb; argv[0] is "inspect". Returns a CLI exit code (0, 1 failure, 2 usage). */
int cmd_inspect(int argc, char **argv);

/* One-line summary and the full help text, for the verb table. */
extern const char cmd_inspect_summary[];
extern const char cmd_inspect_help[];

#endif
