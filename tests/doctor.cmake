# CTest tests of the cudamodel-doctor CLI (included by tests/CMakeLists.txt).
# The checks live in tests/doctor/doctor_check.cmake (a cmake -P script, so they need nothing
# but CMake); the JSON is also piped through `python3 -m json.tool` where python3 exists.
#   doctor_json   --json is valid JSON and the exit status equals its "exit_code"
#   doctor_text   the text report agrees with the JSON: without a driver exit 2 and
#                 "no NVIDIA driver"; with devices their sm_XY, "native" where the library
#                 has native code, exit 0 (5 when a device has no image)
#   doctor_usage  --help, --version, and an unknown option (exit 64, message on stderr)
if(TARGET cudamodel-doctor)
  find_program(CM_PYTHON3 NAMES python3)
  set(cm_doctor_python "")
  if(CM_PYTHON3)
    set(cm_doctor_python "${CM_PYTHON3}")
  endif()
  foreach(mode json text usage)
    add_test(NAME doctor_${mode}
      COMMAND ${CMAKE_COMMAND}
        "-DDOCTOR=$<TARGET_FILE:cudamodel-doctor>"
        "-DPYTHON=${cm_doctor_python}"
        "-DMODE=${mode}"
        -P "${CMAKE_CURRENT_LIST_DIR}/doctor/doctor_check.cmake")
    set_tests_properties(doctor_${mode} PROPERTIES LABELS "host" TIMEOUT 120)
  endforeach()
endif()
