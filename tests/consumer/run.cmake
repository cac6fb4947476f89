# Installs texturevlm's build tree BUILD to PREFIX, then configures, builds and runs the
# consumer project (this folder) against the installed package, with the build's compiler
# flags (the sanitizer build passes its own). cmake -DBUILD=... -DPREFIX=... -DWORK=...
#   -DGENERATOR=... -DFLAGS=... -P run.cmake
foreach(var BUILD PREFIX WORK GENERATOR)
  if(NOT ${var})
    message(FATAL_ERROR "run.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${PREFIX}")
step(${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}" -B "${WORK}" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
     "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
step(${CMAKE_COMMAND} --build "${WORK}")
step("${WORK}/consumer")
if(EXISTS "${WORK}/consumer_cuda")
  step("${WORK}/consumer_cuda")
endif()
