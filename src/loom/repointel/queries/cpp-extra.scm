; Loom's references for C++ (the tree-sitter-cpp wheel's tags query has definitions only):
; called functions and methods, named types, and `new T`.

(call_expression function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression field: (field_identifier) @name)) @reference.call

(call_expression
  function: (qualified_identifier name: (identifier) @name)) @reference.call

(type_identifier) @name @reference.type

(new_expression type: (type_identifier) @name) @reference.class
