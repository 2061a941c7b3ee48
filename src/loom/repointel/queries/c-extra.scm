; Loom's references for C (the tree-sitter-c wheel's tags query has definitions only):
; called functions and named types.

(call_expression function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression field: (field_identifier) @name)) @reference.call

(type_identifier) @name @reference.type
