// The `paulistrings` executable (see app.h).
#include "paulistrings/cli/app.h"

int main(int argc, char** argv) { return paulistrings::cli::main_entry(argc, argv); }
