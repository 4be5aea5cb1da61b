# Included after each project() call of the llama.cpp build (CMAKE_PROJECT_INCLUDE, from
# scripts/build-llama-server.sh). At the end of configuring, the server's glue is compiled at -O1: the HTTP
# server, JSON and argument handling, the chat-template parsers and the multimodal library, about two
# thirds of the build's compile time. The model's arithmetic (ggml) and llama itself keep -O3, so decoding
# is as fast as before; the glue runs a few times per request, not per token.
get_property(fixloop_glue_deferred GLOBAL PROPERTY FIXLOOP_GLUE_DEFERRED)
if(NOT fixloop_glue_deferred)
  set_property(GLOBAL PROPERTY FIXLOOP_GLUE_DEFERRED ON)
  function(fixloop_compile_glue_at_o1)
    foreach(target llama-common llama-common-base mtmd server-context llama-server-impl llama-server cpp-httplib)
      if(TARGET ${target})
        get_target_property(kind ${target} TYPE)
        if(NOT kind STREQUAL "INTERFACE_LIBRARY")
          target_compile_options(${target} PRIVATE -O1)
        endif()
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL fixloop_compile_glue_at_o1)
endif()
