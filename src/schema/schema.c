/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the schema's tables as data (include/ncclscope/schema.h).
 *
 * Everything here is generated from the X-macro tables: the START layouts
 * (how many num[]/str[] words each type carries: the hot path sizes its ring
 * entries with them, the codec encodes and decodes them), the type and state
 * names, and one field descriptor per field for the exporters. Read-only
 * data, safe from any thread. */
#include <stddef.h>

#include "ncclscope/record.h"

/* ---- layouts: num[] and str[] words of each type's START ---- */

/* Bit `idx` of a type's num (or str) mask for each of its fields. */
#define NS_NUM_BIT_num(idx) | (1u << (idx))
#define NS_NUM_BIT_str(idx)
#define NS_STR_BIT_num(idx)
#define NS_STR_BIT_str(idx) | (1u << (idx))
#define NS_NUM_BIT(T, F, slot, idx, ctype, json, name, when) NS_NUM_BIT_##slot(idx)
#define NS_STR_BIT(T, F, slot, idx, ctype, json, name, when) NS_STR_BIT_##slot(idx)
#define NS_NUM_MASK(T) (0u NS_FIELDS_##T(NS_NUM_BIT))
#define NS_STR_MASK(T) (0u NS_FIELDS_##T(NS_STR_BIT))
#define NS_NUM_MASK13(T) (0u NS_FIELDS13_##T(NS_NUM_BIT))
#define NS_STR_MASK13(T) (0u NS_FIELDS13_##T(NS_STR_BIT))
/* Words used = bits set in a mask that must be 0..n-1 (checked below). */
#define NS_POP16(m)                                                                                          \
  (((m) >> 0 & 1) + ((m) >> 1 & 1) + ((m) >> 2 & 1) + ((m) >> 3 & 1) + ((m) >> 4 & 1) + ((m) >> 5 & 1) +     \
   ((m) >> 6 & 1) + ((m) >> 7 & 1) + ((m) >> 8 & 1) + ((m) >> 9 & 1) + ((m) >> 10 & 1) + ((m) >> 11 & 1) + \
   ((m) >> 12 & 1) + ((m) >> 13 & 1) + ((m) >> 14 & 1) + ((m) >> 15 & 1))

#define NS_LAYOUT_CHECK(T, bit, contract, short_name, arg_name, arg_json)                                    \
  _Static_assert((NS_NUM_MASK(T) & (NS_NUM_MASK(T) + 1)) == 0, #T ": num[] indices must be 0..n-1");        \
  _Static_assert((NS_STR_MASK(T) & (NS_STR_MASK(T) + 1)) == 0, #T ": str[] indices must be 0..n-1");        \
  _Static_assert(NS_POP16(NS_NUM_MASK(T)) <= NS_REC_NUMS, #T ": more num[] fields than NS_REC_NUMS");      \
  _Static_assert(NS_POP16(NS_STR_MASK(T)) <= NS_REC_STRS, #T ": more str[] fields than NS_REC_STRS");
NS_SCHEMA_TYPES(NS_LAYOUT_CHECK)

/* A 1.2 block stores the fields below the first 1.3 one: what remains of a
 * type without its 1.3 fields must still be indices 0..n-1. */
#define NS_NUM_MASK12(T) (NS_NUM_MASK(T) & ~NS_NUM_MASK13(T))
#define NS_STR_MASK12(T) (NS_STR_MASK(T) & ~NS_STR_MASK13(T))
#define NS_LAYOUT13_CHECK(T, bit, contract, short_name, arg_name, arg_json)                                      \
  _Static_assert((NS_NUM_MASK12(T) & (NS_NUM_MASK12(T) + 1)) == 0, #T ": 1.3 num[] fields follow the 1.2 ones"); \
  _Static_assert((NS_STR_MASK12(T) & (NS_STR_MASK12(T) + 1)) == 0, #T ": 1.3 str[] fields follow the 1.2 ones");
NS_SCHEMA_TYPES(NS_LAYOUT13_CHECK)

#define NS_TYPE_COUNT(T, bit, contract, short_name, arg_name, arg_json) +1
_Static_assert((0 NS_SCHEMA_TYPES(NS_TYPE_COUNT)) == NS_EV_COUNT, "NS_EV_COUNT is the number of schema types");

const ns_type_layout ns_type_layouts[NS_EV_COUNT] = {
#define NS_LAYOUT(T, bit, contract, short_name, arg_name, arg_json) \
  [NS_EV_##T] = {NS_POP16(NS_NUM_MASK(T)), NS_POP16(NS_STR_MASK(T))},
    NS_SCHEMA_TYPES(NS_LAYOUT)
#undef NS_LAYOUT
};

const ns_type_layout ns_type_layouts12[NS_EV_COUNT] = {
#define NS_LAYOUT12(T, bit, contract, short_name, arg_name, arg_json) \
  [NS_EV_##T] = {NS_POP16(NS_NUM_MASK12(T)), NS_POP16(NS_STR_MASK12(T))},
    NS_SCHEMA_TYPES(NS_LAYOUT12)
#undef NS_LAYOUT12
};

/* ---- field descriptors ---- */

#define NS_FIELD_DESC(T, F, slot, idx, ctype, json, name, when) {name, NS_SLOT_##slot, idx, NS_JSON_##json, when},
#define NS_FIELD_ARRAY(T, bit, contract, short_name, arg_name, arg_json) \
  static const ns_field_desc fields_##T[] = {NS_FIELDS_##T(NS_FIELD_DESC){NULL, 0, 0, 0, 0}};
NS_SCHEMA_TYPES(NS_FIELD_ARRAY)

/* str[] index + 1 of the type's FUNC field, summed over its fields (one at most). */
#define NS_FUNC_POS(T, F, slot, idx, ctype, json, name, when) +((NS_JSON_##json == NS_JSON_FUNC) ? (idx) + 1 : 0)

static const ns_type_desc types[NS_EV_COUNT] = {
#define NS_TYPE_DESC(T, bit, contract, short_name, arg_name, arg_json)                                       \
  [NS_EV_##T] = {contract,         short_name,                                                               \
                 arg_name,         NS_JSON_##arg_json,                                                       \
                 (uint8_t)(sizeof fields_##T / sizeof fields_##T[0] - 1), (int8_t)((0 NS_FIELDS_##T(NS_FUNC_POS)) - 1), \
                 fields_##T},
    NS_SCHEMA_TYPES(NS_TYPE_DESC)
#undef NS_TYPE_DESC
};

const ns_type_desc* ns_type_desc_of(unsigned type) { return type < NS_EV_COUNT ? &types[type] : NULL; }

const char* ns_event_type_name(unsigned type) { return type < NS_EV_COUNT ? types[type].contract : NULL; }

const char* ns_event_short_name(unsigned type) { return type < NS_EV_COUNT ? types[type].short_name : NULL; }

/* ---- states ---- */

static const char* const state_names[] = {
#define NS_STATE_NAME(ID, value, name) [value] = name,
    NS_SCHEMA_STATES(NS_STATE_NAME)
#undef NS_STATE_NAME
    [NS_ST_REPEATED] = "ncclscopeRepeated",
    [NS_ST_CLOSED] = "ncclscopeClosed",
};

const char* ns_close_reason_name(unsigned reason) {
  static const char* const names[NS_CLOSE_REASONS] = {
      [NS_CLOSE_RESTARTED] = "restarted",     [NS_CLOSE_MAX_AGE] = "maxAge",
      [NS_CLOSE_PRESSURE] = "slotPressure",   [NS_CLOSE_COMM_END] = "commEnd",
      [NS_CLOSE_EXIT] = "processExit",        [NS_CLOSE_NEVER_STOPPED] = "neverStopped",
  };
  return reason < NS_CLOSE_REASONS ? names[reason] : NULL;
}

const char* ns_state_name(int state) {
  return (state >= 0 && state < (int)(sizeof state_names / sizeof state_names[0])) ? state_names[state] : NULL;
}
