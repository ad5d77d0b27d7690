# Runs a firmware image on QEMU's mps2-an386 (a Cortex-M4) with semihosting and checks both its
# exit status and what it printed: a self-test passes only with status 0 and the "ok" line; the
# deliberately failing image must exit 1 and name its step. An image that never finishes is
# stopped after 60 s and fails.
# cmake -DQEMU=... -DIMAGE=... -DEXPECT_STATUS=0|1 -DEXPECT_OUTPUT=regex -P run_qemu.cmake
execute_process(
  COMMAND ${QEMU} -M mps2-an386 -nographic -monitor none -serial none
          -semihosting-config enable=on,target=native -kernel ${IMAGE}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 60)
set(out "${out}${err}")
message("${out}")
if(NOT "${status}" STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT out MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match: ${EXPECT_OUTPUT}")
endif()
if(NOT out MATCHES "stack high-water mark: [0-9]+ bytes")
  message(FATAL_ERROR "no stack high-water mark in the output")
endif()
