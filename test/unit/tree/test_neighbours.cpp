// Stencil, neighbour search and 2:1 balance tests.
#include "test_support.hpp"

#include <irregular/tree/htree.hpp>
#include <irregular/tree/neighbours.hpp>
#include <irregular/tree/stencil.hpp>

#include <catch2/catch.hpp>
