# Cross-check of the host occupancy model against NVIDIA's host calculator, cuda_occupancy.h,
# which is a C++ header: C++ is enabled here only, and the test is skipped (exit 77) when there
# is no C++ compiler or no cuda_occupancy.h.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER AND EXISTS ${CUCORE_CUDA_INCLUDE_DIR}/cuda_occupancy.h)
  enable_language(CXX)
  add_executable(test_occupancy_model_xcheck
    ${CMAKE_CURRENT_SOURCE_DIR}/test_occupancy_model_xcheck.cpp)
  set_target_properties(test_occupancy_model_xcheck PROPERTIES
    CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_compile_options(test_occupancy_model_xcheck PRIVATE -Wall -Wextra -Werror)
  target_include_directories(test_occupancy_model_xcheck PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_include_directories(test_occupancy_model_xcheck SYSTEM PRIVATE
    ${CUCORE_CUDA_INCLUDE_DIR})
  target_link_libraries(test_occupancy_model_xcheck PRIVATE cucore_static)
  add_test(NAME occupancy_model_xcheck COMMAND test_occupancy_model_xcheck)
else()
  add_test(NAME occupancy_model_xcheck
    COMMAND sh -c "echo 'skipped: no C++ compiler or no cuda_occupancy.h'; exit 77")
endif()
set_tests_properties(occupancy_model_xcheck PROPERTIES LABELS cpu SKIP_RETURN_CODE 77 TIMEOUT 300)
