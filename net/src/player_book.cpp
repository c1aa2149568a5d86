#include "player_book.hpp"

namespace scenert::net {

void player_book::admit(player_id p, std::string name) {
  auto& s = of(p);
  std::lock_guard lock(s.m);
  s.cards[p].name = std::move(name);
}

void player_book::ask(player_id p, const asked_position& asked) {
  auto& s = of(p);
  std::lock_guard lock(s.m);
  s.cards[p].asked = asked;
}

void player_book::forget_asked(player_id p) {
  auto& s = of(p);
  std::lock_guard lock(s.m);
  if (auto it = s.cards.find(p); it != s.cards.end()) it->second.asked.reset();
}

void player_book::gone(player_id p, clock::time_point now) {
  std::lock_guard lock(gone_mutex_);
  gone_.emplace_back(now + grace, p);
}

void player_book::forget_gone(clock::time_point now) {
  std::lock_guard lock(gone_mutex_);
  while (!gone_.empty() && gone_.front().first <= now) {
    const player_id p = gone_.front().second;
    gone_.pop_front();
    auto& s = of(p);
    std::lock_guard card_lock(s.m);
    s.cards.erase(p);
  }
}

std::optional<player_book::card> player_book::card_of(player_id p) const {
  const auto& s = of(p);
  std::lock_guard lock(s.m);
  auto it = s.cards.find(p);
  if (it == s.cards.end()) return std::nullopt;
  return it->second;
}

std::size_t player_book::size() const {
  std::size_t n = 0;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s.m);
    n += s.cards.size();
  }
  return n;
}

}  // namespace scenert::net
