// The `scenert` executable: the command line with no game module built in (`--module` loads some).
#include <scenert/apps/main.hpp>

int main(int argc, char** argv) { return scenert::apps::main(argc, argv, scenert::module_registry{}); }
