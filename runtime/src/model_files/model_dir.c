/*
 * model_dir.c - finding and reading the files next to a checkpoint.
 */
#include "sgc/runtime/model_files.h"
#include "runtime/src/model_files/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_directory(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *sgc_weights_directory(const char *weights_path) {
  const char *slash;
  if (!weights_path)
    return NULL;
  if (is_directory(weights_path))
    return strdup(weights_path);
  slash = strrchr(weights_path, '/');
  if (!slash)
    return strdup(".");
  return strndup(weights_path,
                 slash == weights_path ? 1 : (size_t)(slash - weights_path));
}

char *sgc_path_join(const char *dir, const char *name) {
  size_t n = strlen(dir), m = strlen(name);
  char *p = (char *)malloc(n + m + 2);
  if (!p)
    return NULL;
  memcpy(p, dir, n);
  p[n] = '/';
  memcpy(p + n + 1, name, m + 1);
  return p;
}

static int dir_has(const char *dir, const char *name) {
  char *p = sgc_path_join(dir, name);
  int yes = p && is_file(p);
  free(p);
  return yes;
}

int sgc_dir_has_tokenizer(const char *dir) {
  return dir_has(dir, "tokenizer.json") || dir_has(dir, "tokenizer.model");
}

static char *read_text(const char *path, char *error, size_t size) {
  FILE *f = fopen(path, "rb");
  char *data = NULL;
  size_t len = 0, cap = 0;
  if (!f) {
    snprintf(error, size, "%s: %s", path, strerror(errno));
    return NULL;
  }
  for (;;) {
    size_t n;
    if (len + 1 >= cap) {
      char *d = (char *)realloc(data, cap ? cap * 2 : 4096);
      if (!d) {
        free(data);
        fclose(f);
        snprintf(error, size, "%s: out of memory", path);
        return NULL;
      }
      data = d;
      cap = cap ? cap * 2 : 4096;
    }
    n = fread(data + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0)
      break;
  }
  if (ferror(f)) {
    snprintf(error, size, "%s: read error", path);
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  data[len] = '\0';
  return data;
}

int sgc_read_chat_template(const char *dir, char **out, const char **source,
                       char *error, size_t size) {
  char *path = sgc_path_join(dir, "chat_template.jinja");
  json_value *config = NULL;
  const json_value *t;
  int rc;
  *out = NULL;
  *source = NULL;
  if (!path) {
    snprintf(error, size, "out of memory");
    return 1;
  }
  if (is_file(path)) {
    *out = read_text(path, error, size);
    free(path);
    *source = "chat_template.jinja";
    return *out ? 0 : 1;
  }
  free(path);
  path = sgc_path_join(dir, "tokenizer_config.json");
  if (!path) {
    snprintf(error, size, "out of memory");
    return 1;
  }
  rc = json_read_file(path, &config, error, size);
  if (rc != 0) {
    free(path);
    return rc < 0 ? 1 : 0;
  }
  t = json_member(config, "chat_template");
  if (t && t->kind == JSON_ARRAY) {
    /* [{"name": "default", "template": "..."}, ...] */
    const json_value *chosen = NULL;
    size_t i;
    for (i = 0; i < t->count; ++i) {
      const json_value *name = json_member(&t->items[i], "name");
      if (name && name->kind == JSON_STRING &&
          strcmp(name->string, "default") == 0)
        chosen = json_member(&t->items[i], "template");
    }
    t = chosen;
  }
  if (t && t->kind != JSON_NULL) {
    if (t->kind != JSON_STRING) {
      snprintf(error, size, "%s: $.chat_template: expected a string, not %s",
               path, json_kind_name(t->kind));
      json_free(config);
      free(path);
      return 1;
    }
    *out = strdup(t->string);
    *source = "tokenizer_config.json";
  }
  json_free(config);
  free(path);
  return 0;
}

/*===----------------------------------------------------------------------===*
 * generation_config.json
 *===----------------------------------------------------------------------===*/

typedef struct reader {
  const char *path;
  const json_value *root;
  char *error;
  size_t size;
} reader;

static int bad_key(reader *r, const char *key, const char *what) {
  snprintf(r->error, r->size, "%s: $.%s: %s", r->path, key, what);
  return 1;
}

/* The member |key| when present and not null; else NULL. */
static const json_value *member(reader *r, const char *key) {
  const json_value *v = json_member(r->root, key);
  return v && v->kind != JSON_NULL ? v : NULL;
}

static int read_number(reader *r, const char *key, double min, double max,
                       int min_open, const char *range, int *has,
                       float *out) {
  const json_value *v = member(r, key);
  char what[128];
  if (!v)
    return 0;
  if (v->kind != JSON_NUMBER) {
    snprintf(what, sizeof what, "expected a number, not %s",
             json_kind_name(v->kind));
    return bad_key(r, key, what);
  }
  if (v->number < min || v->number > max || (min_open && v->number == min)) {
    snprintf(what, sizeof what, "%g is outside %s", v->number, range);
    return bad_key(r, key, what);
  }
  *has = 1;
  *out = (float)v->number;
  return 0;
}

static int read_token_id(reader *r, const char *key, const json_value *v,
                         int32_t *out) {
  char what[128];
  if (v->kind != JSON_NUMBER || !v->integral || v->number < 0 ||
      v->number > 2147483647.0) {
    snprintf(what, sizeof what,
             "expected a token id (an integer >= 0), not %s",
             v->kind == JSON_NUMBER ? "that number" : json_kind_name(v->kind));
    return bad_key(r, key, what);
  }
  *out = (int32_t)v->number;
  return 0;
}

int sgc_read_generation_config(const char *dir, sgc_generation_config_t *g, char *error,
                           size_t size) {
  char *path = sgc_path_join(dir, "generation_config.json");
  json_value *root = NULL;
  reader r;
  const json_value *v;
  int rc;
  memset(g, 0, sizeof *g);
  if (!path) {
    snprintf(error, size, "out of memory");
    return 1;
  }
  rc = json_read_file(path, &root, error, size);
  if (rc != 0) {
    free(path);
    return rc < 0 ? 1 : 0;
  }
  r.path = path;
  r.root = root;
  r.error = error;
  r.size = size;
  rc = 0;
  if (root->kind != JSON_OBJECT) {
    snprintf(error, size, "%s: $: expected an object, not %s", path,
             json_kind_name(root->kind));
    rc = 1;
    goto done;
  }
  g->present = 1;
  if ((v = member(&r, "do_sample")) != NULL) {
    if (v->kind != JSON_BOOL) {
      rc = bad_key(&r, "do_sample", "expected true or false");
      goto done;
    }
    g->has_do_sample = 1;
    g->do_sample = v->boolean;
  }
  if (read_number(&r, "temperature", 0, 1e30, 0, "[0, inf)",
                  &g->has_temperature, &g->temperature) ||
      read_number(&r, "top_p", 0, 1, 1, "(0, 1]", &g->has_top_p,
                  &g->top_p) ||
      read_number(&r, "min_p", 0, 1, 0, "[0, 1]", &g->has_min_p,
                  &g->min_p) ||
      read_number(&r, "repetition_penalty", 0, 1e30, 1, "(0, inf)",
                  &g->has_repetition_penalty, &g->repetition_penalty)) {
    rc = 1;
    goto done;
  }
  if ((v = member(&r, "top_k")) != NULL) {
    if (v->kind != JSON_NUMBER || !v->integral || v->number < 0 ||
        v->number > 2147483647.0) {
      rc = bad_key(&r, "top_k", "expected an integer >= 0");
      goto done;
    }
    g->has_top_k = 1;
    g->top_k = (int32_t)v->number;
  }
  if ((v = member(&r, "eos_token_id")) != NULL) {
    size_t n = v->kind == JSON_ARRAY ? v->count : 1, i;
    g->eos_ids = (int32_t *)calloc(n ? n : 1, sizeof *g->eos_ids);
    if (!g->eos_ids) {
      snprintf(error, size, "out of memory");
      rc = 1;
      goto done;
    }
    for (i = 0; i < n; ++i) {
      char key[64];
      const json_value *item = v->kind == JSON_ARRAY ? &v->items[i] : v;
      if (v->kind == JSON_ARRAY)
        snprintf(key, sizeof key, "eos_token_id[%zu]", i);
      else
        snprintf(key, sizeof key, "eos_token_id");
      if (read_token_id(&r, key, item, &g->eos_ids[i])) {
        rc = 1;
        goto done;
      }
    }
    g->num_eos = n;
  }
done:
  if (rc)
    sgc_generation_config_free(g);
  json_free(root);
  free(path);
  return rc;
}

void sgc_generation_config_free(sgc_generation_config_t *g) {
  free(g->eos_ids);
  memset(g, 0, sizeof *g);
}

void sgc_generation_config_sampling(const sgc_generation_config_t *g,
                                    sgc_config_sampling_t *out) {
  const int sample = g->present && g->has_do_sample && g->do_sample;
  memset(out, 0, sizeof *out);
  out->sample = sample;
  out->top_p = 1.0f;
  out->repetition_penalty = 1.0f;
  if (sample) {
    out->temperature = g->has_temperature ? g->temperature : 1.0f;
    out->top_k = g->has_top_k ? g->top_k : 50;
    if (g->has_top_p)
      out->top_p = g->top_p;
    if (g->has_min_p)
      out->min_p = g->min_p;
    out->given = (g->has_temperature ? SGC_SAMPLING_TEMPERATURE : 0u) |
                 (g->has_top_k ? SGC_SAMPLING_TOP_K : 0u) |
                 (g->has_top_p ? SGC_SAMPLING_TOP_P : 0u) |
                 (g->has_min_p ? SGC_SAMPLING_MIN_P : 0u);
  }
  if (g->has_repetition_penalty) {
    out->repetition_penalty = g->repetition_penalty;
    out->given |= SGC_SAMPLING_REPETITION_PENALTY;
  }
}
