package snapshot

import "h3studio/engine/configfile"

// ConfigError reports a bad configuration file: which file, which field
// (dotted for nested objects; "" for the file as a whole) and what is wrong.
type ConfigError = configfile.Error

// MaxConfigBytes bounds the JSON configuration files read here (the released
// ones are at most a few KB; tokenizer.json is only checked, not read).
const MaxConfigBytes = configfile.MaxConfigBytes
