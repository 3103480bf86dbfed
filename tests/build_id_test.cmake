# cmake/WriteBuildId.cmake must not report an enclosing checkout's revision for a source tree
# that has no .git of its own (an unpacked archive inside another repository).
#   cmake -DWRITE_BUILD_ID=.../cmake/WriteBuildId.cmake -DWORK=<empty dir> -P build_id_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src")
file(WRITE "${WORK}/tracked.txt" "x\n")
execute_process(COMMAND git init -q WORKING_DIRECTORY "${WORK}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND git add tracked.txt WORKING_DIRECTORY "${WORK}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND git -c user.name=t -c user.email=t@t commit -qm init
  WORKING_DIRECTORY "${WORK}" COMMAND_ERROR_IS_FATAL ANY)
foreach(dir src .)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK}/${dir} -DOUTPUT=${WORK}/id.h
    -P ${WRITE_BUILD_ID} COMMAND_ERROR_IS_FATAL ANY)
  file(READ "${WORK}/id.h" id)
  if(dir STREQUAL "src" AND NOT id MATCHES "REVISION \"unknown\"")
    message(FATAL_ERROR "nested archive reported the enclosing revision:\n${id}")
  elseif(dir STREQUAL "." AND id MATCHES "REVISION \"unknown\"")
    message(FATAL_ERROR "the repository's own revision was not reported:\n${id}")
  endif()
  file(REMOVE "${WORK}/id.h")
endforeach()
