#include "module_reader.hpp"

namespace scenert::detail {

module_value to_module_value(const json& v) {
  module_value out;
  using t = module_value::type;
  if (v.is_boolean()) {
    out.kind = t::boolean;
    out.boolean = v.get<bool>();
  } else if (v.is_number()) {
    out.kind = t::number;
    out.number = v.get<double>();
    out.integer = v.is_number_integer();
  } else if (v.is_string()) {
    out.kind = t::string;
    out.text = v.get<std::string>();
  } else if (v.is_array()) {
    out.kind = t::array;
    for (const auto& item : v) out.items.push_back(to_module_value(item));
  } else if (v.is_object()) {
    out.kind = t::object;
    for (const auto& [key, item] : v.items()) out.fields.push_back({key, to_module_value(item)});
  }
  return out;
}

// Every key but `name` is the module's: whether it knows them is its own check (scenert check).
void read_module(object_reader& scene, scene_def& s) {
  const json* v = scene.find("module", presence::optional);
  if (v == nullptr) return;
  const std::string pointer = scene.pointer_to("module");
  if (!v->is_object())
    return report_type(scene.sink(), pointer, "an object {\"name\": \"...\", parameters...}", *v);
  module_ref ref;
  ref.pointer = pointer;
  const auto name = v->find("name");
  if (name == v->end()) return scene.sink().add(pointer, "missing required key \"name\"");
  if (!name->is_string() || name->get<std::string>().empty())
    return report_type(scene.sink(), child_pointer(pointer, "name"), "a non-empty string", *name);
  ref.name = name->get<std::string>();
  ref.params.kind = module_value::type::object;
  for (const auto& [key, item] : v->items())
    if (key != "name") ref.params.fields.push_back({key, to_module_value(item)});
  s.module = std::move(ref);
}

}  // namespace scenert::detail
