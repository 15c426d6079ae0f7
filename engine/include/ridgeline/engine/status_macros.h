// The two return-if-error helpers abseil 20220623 does not ship.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RIDGELINE_CONCAT_INNER_(a, b) a##b
#define RIDGELINE_CONCAT_(a, b) RIDGELINE_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (::absl::Status _rl_status = (expr); !_rl_status.ok()) \
      return _rl_status;                               \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` declares x from an OK StatusOr or
// returns its status.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(RIDGELINE_CONCAT_(_rl_statusor_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                           \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()
