#pragma once
/// How a party plays the crypt, for `dungeon_server bots --play crypt --play-scene 2`: scenert's bots
/// log in, enter, walk, read their loot and log in again; this script is the game's part (the
/// dungeon's opcodes, whom to attack, when the fight is over), so scenert never learns them.

#include <scenert/bots/party_script.hpp>

namespace dungeon {

/// Registers "crypt": each member walks to the boss and attacks it (2001) whenever its cooldown
/// allows, notes the phases (2100) and the kill (2102); the leader opens the chest (2002); a member
/// is done when the chest opened (2103) and its loot follows (1013).
void register_parties(scenert::bots::party_scripts& scripts);

}  // namespace dungeon
