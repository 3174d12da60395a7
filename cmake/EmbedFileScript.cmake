# Script mode helper of EmbedFile.cmake: writes INPUT's text as R"json(...)json" into OUTPUT.
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "R\"embedded(${content})embedded\"\n")
