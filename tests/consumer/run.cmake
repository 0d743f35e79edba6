# Installs the built project into a scratch prefix, checks that cucore.h and its parts
# (cucore/*.h) are there, then builds a tiny consumer against it twice: with pkg-config and with
# find_package(cucore). Both must build and run.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${OUT}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed: ${err}")
endif()
# 0. the header and every part of it are installed, and a part compiles alone from there.
file(GLOB parts RELATIVE ${SRC}/include ${SRC}/include/cucore/*.h)
foreach(h cucore.h ${parts})
  if(NOT EXISTS ${OUT}/prefix/include/${h})
    message(FATAL_ERROR "install did not put include/${h} into ${OUT}/prefix/include")
  endif()
endforeach()
file(WRITE ${OUT}/part.c "#include <cucore/kernels.h>\nint main(void) { return CUCORE_OK; }\n")
execute_process(COMMAND cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I${OUT}/prefix/include
                        ${OUT}/part.c RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "an installed part (cucore/kernels.h) does not compile alone: ${err}")
endif()
# 1. pkg-config
set(ENV{PKG_CONFIG_PATH} "${OUT}/prefix/lib/pkgconfig")
execute_process(COMMAND pkg-config --cflags --libs cucore OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cucore failed: ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND cc -std=c11 -Wall -Wextra -Werror ${SRC}/tests/consumer/consumer.c ${flags}
                        -Wl,-rpath,${OUT}/prefix/lib -o ${OUT}/consumer_pkgconfig
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config consumer did not build: ${err}")
endif()
execute_process(COMMAND ${OUT}/consumer_pkgconfig RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config consumer failed: ${out}${err}")
endif()
# 2. find_package
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/consumer -B ${OUT}/cmake-build
                        -DCMAKE_PREFIX_PATH=${OUT}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package consumer did not configure: ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${OUT}/cmake-build RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package consumer did not build: ${out}${err}")
endif()
execute_process(COMMAND ${OUT}/cmake-build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package consumer failed: ${out}${err}")
endif()
message(STATUS "consumer built and ran via pkg-config and find_package: ${out}")
