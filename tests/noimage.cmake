# "No kernel image" test: a kernel built for sm_120 only (SASS, no PTX), whatever
# CMAKE_CUDA_ARCHITECTURES says for the rest of the build, so that on the H200 (sm_90) the
# runtime has no image for it. Included by tests/CMakeLists.txt (tests/*.cmake).
# The test lives in tests/gpu/noimage/ so that the tests/gpu/test_*.c glob does not take it.
if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.8)
  message(STATUS "test_gpu_noimage: nvcc ${CMAKE_CUDA_COMPILER_VERSION} cannot build sm_120; not built")
  return()
endif()

add_library(cm_noimage_kernel STATIC "${CMAKE_CURRENT_LIST_DIR}/gpu/noimage/noimage_kernel.cu")
set_target_properties(cm_noimage_kernel PROPERTIES CUDA_ARCHITECTURES "120-real")
target_link_libraries(cm_noimage_kernel PUBLIC CUDA::cudart)

add_executable(test_gpu_noimage "${CMAKE_CURRENT_LIST_DIR}/gpu/noimage/test_gpu_noimage.c")
target_link_libraries(test_gpu_noimage PRIVATE cm_test_common cm_noimage_kernel)
set_target_properties(test_gpu_noimage PROPERTIES LINKER_LANGUAGE CUDA)
add_test(NAME test_gpu_noimage COMMAND test_gpu_noimage)
set_tests_properties(test_gpu_noimage PROPERTIES LABELS gpu
  SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
  ENVIRONMENT "CM_TEST_TIER=gpu")
