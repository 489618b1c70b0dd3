//===- sgc.cpp - the sgc compiler driver ----------------------------------===//
//
// Part of sgc. `sgc compile GRAPH` and `sgc explain GRAPH`; everything lives
// in compiler/Driver.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"

int main(int argc, char **argv) { return mlir::sgc::runSgcMain(argc, argv); }
