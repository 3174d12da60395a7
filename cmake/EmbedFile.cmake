# embed_text_file(INPUT OUTPUT): turns a text file into a C++ raw-string literal include, so data travels
# inside the binary. Written when CMake configures (again whenever the input changes: it is a configure
# dependency), not by a build step: a generated source would make every object of its target wait for
# the target's dependencies (the CUDA kernels) to finish building.
function(embed_text_file input output)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${input})
  file(READ ${input} content)
  # Rewritten only when the text differs, so that a re-configure rebuilds nothing.
  file(CONFIGURE OUTPUT ${output} CONTENT "R\"embedded(@content@)embedded\"\n" @ONLY)
endfunction()
