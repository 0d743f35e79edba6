/* test_link_version.c -- incremental linking with the installed nvJitLink (no GPU): an nvJitLink
 * older than an output needs (13.2 for a relocatable output, 13.3 for linked LTO-IR) refuses it
 * by name, with both versions, before anything is linked. With a new enough nvJitLink the
 * version check passes (the stand-in inputs then fail in nvJitLink itself, not as too old). */
#include "support.h"

#include <stdio.h>
#include <string.h>

static const unsigned char fake_ltoir[] = {0xed, 0x43, 0x4e, 0x7f, 'l', 't', 'o', 0};

static void outputs_newer_than_nvjitlink_are_refused(void **state) {
  (void)state;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  if (!v.nvjitlink.loaded) {
    print_message("no nvJitLink: %s\n", v.nvjitlink.error ? v.nvjitlink.error : "?");
    skip();
  }
  int found = v.nvjitlink.version;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"));
  const struct {
    cucore_link_output kind;
    int need;
    const char *what;
  } cases[] = {{CUCORE_LINK_OUTPUT_RELOCATABLE, 13020, "a relocatable link output (-r)"},
               {CUCORE_LINK_OUTPUT_LTOIR, 13030, "linked LTO-IR as a link output"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cucore_object *obj = NULL;
    cucore_status st = cucore_linker_complete_output(lk, cases[i].kind, &obj);
    if (found >= cases[i].need) {
      print_message("nvJitLink %d.%d makes %s: not refused (%s)\n", found / 1000, found % 1000 / 10,
                    cucore_link_output_name(cases[i].kind), st ? cucore_last_error() : "linked");
      assert_int_not_equal(CUCORE_CODE(st), CUCORE_TOOLKIT_TOO_OLD);
      cucore_object_destroy(obj);
      continue;
    }
    assert_int_equal(CUCORE_CODE(st), CUCORE_TOOLKIT_TOO_OLD);
    assert_null(obj);
    char want[256];
    snprintf(want, sizeof want,
             "cucore_linker_complete_output: %s needs nvJitLink %d.%d, found %d.%d", cases[i].what,
             cases[i].need / 1000, cases[i].need % 1000 / 10, found / 1000, found % 1000 / 10);
    assert_contains(cucore_last_error(), want);
    print_message("%s\n", cucore_last_error());
  }
  /* The LTO-IR target of cucore_linker_complete is the same output. */
  if (found < 13030) {
    cucore_object *obj = NULL;
    assert_status(cucore_linker_complete(lk, CUCORE_CODE_LTOIR, &obj), CUCORE_TOOLKIT_TOO_OLD);
    assert_contains(cucore_last_error(), "cucore_linker_complete: linked LTO-IR as a link output "
                                         "needs nvJitLink 13.3");
  }
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(outputs_newer_than_nvjitlink_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
