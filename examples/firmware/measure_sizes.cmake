# The firmware image's size table: arm-none-eabi-size over each object and the linked image, run
# in the directory that holds them so that the table names files, not paths; printed for the
# build's log and written to OUT, which README.md's table must equal (readme_sizes.cmake).
# cmake -DSIZE=arm-none-eabi-size -DOUT=sizes.txt "-DFILES=a.o;b.o;firmware.elf" -P measure_sizes.cmake
execute_process(
  COMMAND ${SIZE} ${FILES}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE table
  ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${SIZE} failed: ${err}")
endif()
file(WRITE ${OUT} "${table}")
message("Cortex-M4 image: code size per component (before --gc-sections), then the linked image\n"
        "${table}")
