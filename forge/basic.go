package forge

import "encoding/base64"

// basic is a Basic credential's text, as git writes it.
func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
