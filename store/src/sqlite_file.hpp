#pragma once
// sqlite_file: the store's SQLite connection and its statements, used by the writer thread only.
// Two tables: `grants` (every grant applied, by its id: the key that makes a grant apply once) and
// `holdings` (what each account holds of each item, the sum of its grants).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/player_store.hpp>

struct sqlite3;
struct sqlite3_stmt;

namespace scenert::store::detail {

// Thread-safety: none; one thread at a time (the writer thread, once open returned).
class sqlite_file {
 public:
  // Opens or creates the file, in WAL mode with synchronous=FULL, its tables made when absent.
  static result<std::unique_ptr<sqlite_file>, store_errc> open(const std::string& path);
  ~sqlite_file();
  sqlite_file(const sqlite_file&) = delete;
  sqlite_file& operator=(const sqlite_file&) = delete;

  result<void, store_errc> begin();
  result<void, store_errc> commit();
  void rollback() noexcept;
  // Applies a grant to `owner` inside the open transaction: true when applied now, false when its id
  // was applied before (nothing changes).
  result<bool, store_errc> apply(const grant& g, const std::string& owner, std::int64_t at_ms);
  // What `owner` holds, by item.
  result<std::vector<holding>, store_errc> holdings_of(const std::string& owner);
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  sqlite_file(sqlite3* db, std::string path);
  error<store_errc> failure(const char* doing) const;
  result<void, store_errc> exec(const char* sql, const char* doing);
  result<void, store_errc> prepare();

  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* insert_grant_ = nullptr;
  sqlite3_stmt* add_holding_ = nullptr;
  sqlite3_stmt* select_holdings_ = nullptr;
};

}  // namespace scenert::store::detail
