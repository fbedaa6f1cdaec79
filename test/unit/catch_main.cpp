// The single translation unit that holds Catch2's main for all serial test programs.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
