#include "sqlite_file.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

namespace scenert::store::detail {
namespace {

// The schema this scenert writes; a file with a higher user_version was made by a newer one.
constexpr int schema_version = 1;

constexpr const char* schema = R"sql(
CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY NOT NULL,
  owner TEXT NOT NULL,
  item INTEGER NOT NULL,
  count INTEGER NOT NULL,
  at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS holdings (
  owner TEXT NOT NULL,
  item INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (owner, item)
) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

}  // namespace

sqlite_file::sqlite_file(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

sqlite_file::~sqlite_file() {
  for (sqlite3_stmt* s : {insert_grant_, add_holding_, select_holdings_}) sqlite3_finalize(s);
  sqlite3_close(db_);
}

error<store_errc> sqlite_file::failure(const char* doing) const {
  return {store_errc::io, fmt::format("{}: {}: {}", path_, doing, sqlite3_errmsg(db_))};
}

result<void, store_errc> sqlite_file::exec(const char* sql, const char* doing) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return failure(doing);
  return {};
}

// WAL: readers (an operator's backup) never block the writer. synchronous=FULL: each commit is on
// the disk when it returns (NORMAL would survive a killed process but not a power cut, and the
// client is told of a grant right after its commit). One commit per batch keeps that cheap.
result<std::unique_ptr<sqlite_file>, store_errc> sqlite_file::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite_file> f(new sqlite_file(db, path));
  if (opened != SQLITE_OK) return f->failure("cannot open the player store");
  sqlite3_busy_timeout(db, 5000);  // another process (a backup) holding a lock for a moment
  int version = 0;
  auto read_version = [](void* out, int, char** values, char**) {
    *static_cast<int*>(out) = values[0] ? std::atoi(values[0]) : 0;
    return 0;
  };
  if (sqlite3_exec(db, "PRAGMA user_version", read_version, &version, nullptr) != SQLITE_OK)
    return f->failure("not a player store");
  if (version > schema_version)
    return fail(store_errc::io,
                fmt::format("{}: a player store of schema {}, made by a newer scenert (this one "
                            "knows {})",
                            path, version, schema_version));
  if (auto r = f->exec("PRAGMA journal_mode=WAL", "cannot switch to WAL"); !r) return r.error();
  if (auto r = f->exec("PRAGMA synchronous=FULL", "cannot set synchronous=FULL"); !r) return r.error();
  if (auto r = f->exec(schema, "cannot make the store's tables"); !r) return r.error();
  if (auto r = f->prepare(); !r) return r.error();
  return f;
}

result<void, store_errc> sqlite_file::prepare() {
  auto one = [&](const char* sql, sqlite3_stmt** out) {
    return sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, out, nullptr) == SQLITE_OK;
  };
  if (!one("INSERT OR IGNORE INTO grants (id, owner, item, count, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
           &insert_grant_) ||
      !one("INSERT INTO holdings (owner, item, count) VALUES (?1, ?2, ?3) "
           "ON CONFLICT (owner, item) DO UPDATE SET count = count + excluded.count",
           &add_holding_) ||
      !one("SELECT item, count FROM holdings WHERE owner = ?1 ORDER BY item", &select_holdings_))
    return failure("cannot prepare the store's statements");
  return {};
}

result<void, store_errc> sqlite_file::begin() {
  return exec("BEGIN IMMEDIATE", "cannot begin a transaction");
}
result<void, store_errc> sqlite_file::commit() { return exec("COMMIT", "cannot commit"); }
void sqlite_file::rollback() noexcept {
  if (!sqlite3_get_autocommit(db_)) (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

// The grant's row first: a repeated id inserts nothing (OR IGNORE), and its holding is not added to.
result<bool, store_errc> sqlite_file::apply(const grant& g, const std::string& owner, std::int64_t at_ms) {
  sqlite3_reset(insert_grant_);
  sqlite3_bind_text(insert_grant_, 1, g.id.data(), static_cast<int>(g.id.size()), SQLITE_STATIC);
  sqlite3_bind_text(insert_grant_, 2, owner.data(), static_cast<int>(owner.size()), SQLITE_STATIC);
  sqlite3_bind_int64(insert_grant_, 3, g.item);
  sqlite3_bind_int64(insert_grant_, 4, g.count);
  sqlite3_bind_int64(insert_grant_, 5, at_ms);
  if (sqlite3_step(insert_grant_) != SQLITE_DONE) return failure("cannot write a grant");
  if (sqlite3_changes(db_) == 0) return false;
  sqlite3_reset(add_holding_);
  sqlite3_bind_text(add_holding_, 1, owner.data(), static_cast<int>(owner.size()), SQLITE_STATIC);
  sqlite3_bind_int64(add_holding_, 2, g.item);
  sqlite3_bind_int64(add_holding_, 3, g.count);
  if (sqlite3_step(add_holding_) != SQLITE_DONE) return failure("cannot add to a holding");
  return true;
}

result<std::vector<holding>, store_errc> sqlite_file::holdings_of(const std::string& owner) {
  sqlite3_reset(select_holdings_);
  sqlite3_bind_text(select_holdings_, 1, owner.data(), static_cast<int>(owner.size()), SQLITE_STATIC);
  std::vector<holding> out;
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(select_holdings_)) == SQLITE_ROW)
    out.push_back({static_cast<item_id>(sqlite3_column_int64(select_holdings_, 0)),
                   sqlite3_column_int64(select_holdings_, 1)});
  if (step != SQLITE_DONE) return failure("cannot read holdings");
  return out;
}

}  // namespace scenert::store::detail
