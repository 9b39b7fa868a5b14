// The transformation subcommands as a user runs them: convert, sanitize, set-shapes, extract.
#include <gtest/gtest.h>
