# Writes OUTPUT, a C++ file defining attnsim::arch::kSourcesMarkdown with INPUT's text.
file(READ "${INPUT}" text)
set(delim "attnsim_sources")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from docs/sources.md; do not edit.\nnamespace attnsim::arch {\nextern const char kSourcesMarkdown[];\nconst char kSourcesMarkdown[] = R\"${delim}(${text})${delim}\";\n}  // namespace attnsim::arch\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
