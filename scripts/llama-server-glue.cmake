# Included after each project() call of the llama.cpp build (CMAKE_PROJECT_INCLUDE, from
# scripts/build-llama-server.sh). At the end of configuring, the server's glue is compiled at -O1: the HTTP
# server, JSON and argument handling, the chat-template parsers and the multimodal library, about two
# thirds of the build's compile time. The model's arithmetic (ggml) and llama itself keep -O3, so decoding
# is as fast as before; the glue runs a few times per request, not per token. The glue's libraries are
# also built as unity builds (16 sources to a translation unit, as llama.cpp builds its own models): most
# of their sources parse the same large JSON and template headers, so each is parsed once per 16.
get_property(fixloop_glue_deferred GLOBAL PROPERTY FIXLOOP_GLUE_DEFERRED)
if(NOT fixloop_glue_deferred)
  set_property(GLOBAL PROPERTY FIXLOOP_GLUE_DEFERRED ON)
  # `target` as a unity build; the sources named after it are compiled alone (they clash with the others)
  function(fixloop_unity target)
    if(TARGET ${target})
      get_target_property(kind ${target} TYPE)
      if(NOT kind STREQUAL "INTERFACE_LIBRARY")
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
        get_target_property(dir ${target} SOURCE_DIR)
        foreach(file ${ARGN})
          set_source_files_properties("${dir}/${file}" DIRECTORY "${dir}" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
        endforeach()
      endif()
    endif()
  endfunction()
  function(fixloop_compile_glue_at_o1)
    foreach(target llama-common llama-common-base mtmd server-context llama-server-impl llama-server cpp-httplib)
      if(TARGET ${target})
        get_target_property(kind ${target} TYPE)
        if(NOT kind STREQUAL "INTERFACE_LIBRARY")
          target_compile_options(${target} PRIVATE -O1)
        endif()
      endif()
    endforeach()
    fixloop_unity(llama-common json.cpp)  # its own `ordered_json` clashes with nlohmann's
    fixloop_unity(mtmd mtmd-helper.cpp mtmd-helper-gen.cpp)  # they refuse mtmd's internal headers
    fixloop_unity(server-context)
    fixloop_unity(llama-server-impl)
  endfunction()
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL fixloop_compile_glue_at_o1)
endif()
