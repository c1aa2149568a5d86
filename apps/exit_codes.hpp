#pragma once
// The command-line contract shared by every subcommand (docs/operators.md says the same).

namespace scenert::apps {

/// Process exit codes of `scenert`.
enum exit_code : int {
  exit_ok = 0,                ///< success
  exit_invalid_table = 1,     ///< the table has errors (each on stderr as FILE:/json/pointer: reason)
  exit_usage = 2,             ///< bad command line, or a file that cannot be read
  exit_invariant_broken = 3,  ///< a load-test invariant broke
  exit_fenced = 4,  ///< a cluster node lost its lease (declared dead or replaced) and stopped serving
};

}  // namespace scenert::apps
