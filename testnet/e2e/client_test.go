package e2e

import (
	"encoding/json"
	"net/http"
)

// getJSON decodes a 200 answer from url into v, and says whether it got one.
func getJSON(url string, v any) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}
