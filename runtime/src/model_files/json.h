/*
 * json.h - a small strict JSON reader for the configs next to a checkpoint
 * (generation_config.json, tokenizer_config.json): the whole document as a
 * tree, or an error naming the line and column.
 */
#ifndef SGC_RUNTIME_SRC_MODEL_FILES_JSON_H
#define SGC_RUNTIME_SRC_MODEL_FILES_JSON_H

#include <stddef.h>

typedef enum json_kind {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT
} json_kind;

typedef struct json_value json_value;
struct json_value {
  json_kind kind;
  int boolean;
  double number;
  int integral;  /* a number written without fraction or exponent */
  char *string;  /* JSON_STRING: UTF-8, NUL-terminated */
  size_t count;  /* JSON_ARRAY, JSON_OBJECT: elements or members */
  char **keys;   /* JSON_OBJECT: member names */
  json_value *items;
};

/* Parses |len| bytes. Returns the tree (free with json_free) or NULL with
 * |error| (|size| bytes) holding "line L, column C: what". */
json_value *json_parse(const char *text, size_t len, char *error, size_t size);
void json_free(json_value *v);
/* The member |key| of object |v|, or NULL. */
const json_value *json_member(const json_value *v, const char *key);
/* "a number", "a string", ... for messages (static). */
const char *json_kind_name(json_kind kind);

/* Reads and parses a file: 0 and |*out|, 1 when it does not exist, or -1
 * with |error| holding "PATH: line L, column C: what" (or why it could not
 * be read). */
int json_read_file(const char *path, json_value **out, char *error,
                   size_t size);

#endif /* SGC_RUNTIME_SRC_MODEL_FILES_JSON_H */
