# Packaging test: build libcudamodel shared and static in scratch trees, install each with
# `cmake --install --prefix`, and build and run tests/consumer against each install through
# pkg-config and through find_package(cudamodel). See tests/consumer/run_consumer_test.sh.
# Slow (two more builds of the library, sm_75 only), so generously timed; label "install".
find_program(CM_BASH_EXECUTABLE bash REQUIRED)
add_test(NAME install_consumers
  COMMAND "${CM_BASH_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/consumer/run_consumer_test.sh"
          --source "${PROJECT_SOURCE_DIR}"
          --work "${CMAKE_CURRENT_BINARY_DIR}/install-test"
          --cmake "${CMAKE_COMMAND}"
          --cuda-compiler "${CMAKE_CUDA_COMPILER}"
          --c-compiler "${CMAKE_C_COMPILER}"
          --generator "${CMAKE_GENERATOR}")
set_tests_properties(install_consumers PROPERTIES
  LABELS "host;install"
  TIMEOUT 1200
  # The builds inside use every core; running it alone keeps the other tests' timings honest.
  RUN_SERIAL TRUE)
