// qrt — the MLIR text form of a graph: parser and printer.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"

namespace qrt {

/// Parses a graph written as one `func.func` (optionally inside `module { ... }`) whose ops
/// use MLIR's generic syntax, plus the custom forms `return`, `quant.qcast %x : T to T`
/// (likewise dcast/scast). The graph is verified before it is returned. Errors read
/// `file:line:col: error: message` through Status::to_string().
Result<Graph> parse_graph(std::string_view text, const std::string& file = "");

/// parse_graph with a budget: the graph's dense constants together may hold at most
/// `max_constant_bytes` (literals and splats are stored expanded, so a few bytes of text can
/// claim gigabytes); the first constant past it fails, naming it, before it is allocated.
Result<Graph> parse_graph(std::string_view text, const std::string& file, size_t max_constant_bytes);

/// Prints the canonical text form: generic op syntax, MLIR-formatted types and attributes,
/// value names kept where the graph has them. `mlir-opt --allow-unregistered-dialect` reads it.
std::string print_graph(const Graph& graph);

/// Whether `name` is a bare identifier of the text form ([A-Za-z_][A-Za-z0-9_$.]*), as a
/// function name must be to print and parse again.
bool is_bare_identifier(std::string_view name);

}  // namespace qrt
