package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/wire"
)

// MaxCredentialSize bounds a credential or status list the client reads (identity.
// MaxCredentialSize).
const MaxCredentialSize = 64 << 10

// getText sends a GET and returns the 2xx answer's body as text.
func (c *Client) getText(ctx context.Context, path string) (string, error) {
	_, data, err := c.send(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// RegistrationCredential is GET /v1/credentials/{did}/registration: the DID's VC 2.0
// registration credential, a compact vc+jwt signed by the node's DID.
func (c *Client) RegistrationCredential(ctx context.Context, did string) (string, error) {
	return c.getText(ctx, "/v1/credentials/"+esc(did)+"/registration")
}

// RegistrationCredentialV1 is GET /v1/credentials/{did}/registration?version=1.1: the VC
// Data Model 1.1 VC-JWT the node issued when it registered the DID.
func (c *Client) RegistrationCredentialV1(ctx context.Context, did string) (string, error) {
	return c.getText(ctx, "/v1/credentials/"+esc(did)+"/registration?version=1.1")
}

// StakeCredential is GET /v1/credentials/{did}/stake: the DID's VC 2.0 stake credential
// (under wallet, or the node's pick when wallet is the zero address).
func (c *Client) StakeCredential(ctx context.Context, did string, wallet common.Address) (string, error) {
	path := "/v1/credentials/" + esc(did) + "/stake"
	if wallet != (common.Address{}) {
		path += "?wallet=" + wallet.Hex()
	}
	return c.getText(ctx, path)
}

// StatusList is GET /v1/status/{n}: the node's revocation status list n, a
// BitstringStatusListCredential as a compact vc+jwt.
func (c *Client) StatusList(ctx context.Context, n int) (string, error) {
	return c.getText(ctx, fmt.Sprintf("/v1/status/%d", n))
}

// VerifyCredential is POST /v1/credentials/verify: the node checks a credential it issued
// (signature, window, status bit). A refusal is an *Error whose Slug names it
// (credential-revoked, credential-expired, ...).
func (c *Client) VerifyCredential(ctx context.Context, jwt string) (*wire.CredentialVerdict, error) {
	var out wire.CredentialVerdict
	err := c.do(ctx, request{method: http.MethodPost, path: "/v1/credentials/verify", contentType: "application/vc+jwt", body: []byte(jwt)}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// FetchCredential GETs a credential from a URL a credential names (its statusListCredential),
// on whatever host it is: http or https only, at most MaxCredentialSize bytes.
func FetchCredential(ctx context.Context, hc *http.Client, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/vc+jwt")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxCredentialSize+1))
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetch %s: %w", rawURL, errorOf(resp.StatusCode, data))
	}
	if len(data) > MaxCredentialSize {
		return "", fmt.Errorf("fetch %s: over %d bytes", rawURL, MaxCredentialSize)
	}
	return strings.TrimSpace(string(data)), nil
}
