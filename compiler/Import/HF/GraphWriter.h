//===- GraphWriter.h - HfModel -> system_graph.json (schema 6) --*- C++ -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_GRAPHWRITER_H
#define SGC_COMPILER_IMPORT_HF_GRAPHWRITER_H

#include "compiler/Import/HF/HfModel.h"

#include <string>

namespace mlir::sgc::import::hf {

/// The schema-6 graph of `model`, components `target` (and `vision`), with
/// `artifact` as every source_artifact and objects whose source_bindings
/// count the family tensor table (SCHEMA6.md). Indented JSON, newline at
/// the end.
std::string writeGraph(const HfModel &model, const std::string &artifact);

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_GRAPHWRITER_H
