package hostaddr

import (
	"fmt"
	"slices"
	"strings"
)

// Preset is one allow-preset name: the hosts an ecosystem's standard client
// reads packages from, as allow-domain lines without a port (https, and
// plain http:// requests), and nothing it would only need to publish,
// search or log in. docs/network.md lists the same hosts, with
// the same reasons; a test keeps the two in step.
type Preset struct {
	Name   string
	Client string // the client whose reads the hosts serve
	Hosts  []PresetHost
}

// PresetHost is one host of a preset and what the client reads there.
type PresetHost struct {
	Host string
	Why  string
}

// Presets are the allow-preset names, in the order the docs list them.
var Presets = []Preset{
	{Name: "npm", Client: "npm, npx, yarn and pnpm with npm's registry", Hosts: []PresetHost{
		{"registry.npmjs.org", "the registry: package documents and tarballs"},
	}},
	{Name: "pypi", Client: "pip, uv and poetry with PyPI", Hosts: []PresetHost{
		{"pypi.org", "the simple index and the JSON API"},
		{"files.pythonhosted.org", "the wheels and source archives the index links to"},
	}},
	{Name: "go", Client: "the go command with its default GOPROXY and GOSUMDB", Hosts: []PresetHost{
		{"proxy.golang.org", "the module proxy: versions, go.mod files, zips, toolchains"},
		{"sum.golang.org", "the checksum database every new module is verified against"},
	}},
	{Name: "crates", Client: "cargo with crates.io", Hosts: []PresetHost{
		{"index.crates.io", "the sparse index"},
		{"static.crates.io", "the crate files the index's config.json names"},
	}},
	{Name: "rubygems", Client: "gem and bundler with rubygems.org", Hosts: []PresetHost{
		{"rubygems.org", "the API and the .gem files"},
		{"index.rubygems.org", "the compact index bundler reads"},
	}},
	{Name: "maven", Client: "Maven and Gradle with Maven Central", Hosts: []PresetHost{
		{"repo.maven.apache.org", "Maven Central, as Maven and Gradle name it"},
		{"repo1.maven.org", "Maven Central under its older name, which many builds still use"},
	}},
	{Name: "debian", Client: "apt on Debian", Hosts: []PresetHost{
		{"deb.debian.org", "the archive"},
		{"security.debian.org", "the security updates"},
	}},
	{Name: "ubuntu", Client: "apt on Ubuntu", Hosts: []PresetHost{
		{"archive.ubuntu.com", "the archive for amd64"},
		{"security.ubuntu.com", "the security updates for amd64"},
		{"ports.ubuntu.com", "the archive and security updates for arm64 and other ports"},
	}},
	{Name: "alpine", Client: "apk on Alpine", Hosts: []PresetHost{
		{"dl-cdn.alpinelinux.org", "the package repositories"},
	}},
	{Name: "github", Client: "git over https, and downloads of archives and release assets", Hosts: []PresetHost{
		{"github.com", "git clone and fetch over https; archive and release URLs, which redirect to the hosts below"},
		{"codeload.github.com", "source archives (tarballs of a ref), which npm, pip and go fetch for GitHub dependencies"},
		{"objects.githubusercontent.com", "release assets and LFS objects"},
		{"release-assets.githubusercontent.com", "release assets"},
	}},
	{Name: "gitlab", Client: "git over https with gitlab.com", Hosts: []PresetHost{
		{"gitlab.com", "git clone and fetch over https, archives and the package registries"},
	}},
	{Name: "docker-hub", Client: "registry clients (crane, skopeo, docker) pulling from Docker Hub", Hosts: []PresetHost{
		{"registry-1.docker.io", "the registry API: manifests"},
		{"auth.docker.io", "the anonymous pull tokens the registry asks for"},
		{"production.cloudflare.docker.com", "the layers, to which the registry redirects"},
	}},
}

// PresetNames are the names allow-preset takes, in order.
func PresetNames() []string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	return names
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, bool) {
	i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, false
	}
	return Presets[i], true
}

// ParsePresets parses an allow-preset value: one name, or names separated
// by commas.
func ParsePresets(value string) ([]Preset, error) {
	var out []Preset
	for _, n := range strings.Split(value, ",") {
		n = strings.TrimSpace(n)
		p, ok := LookupPreset(n)
		if !ok {
			return nil, fmt.Errorf("%q is not a preset (%s)", n, strings.Join(PresetNames(), ", "))
		}
		out = append(out, p)
	}
	return out, nil
}

// Domains are the allow-domain entries the preset stands for.
func (p Preset) Domains() []Domain {
	out := make([]Domain, len(p.Hosts))
	for i, h := range p.Hosts {
		out[i] = Domain{Host: h.Host}
	}
	return out
}

// presetFor names the preset that would let host:port through by access,
// "" for none.
func presetFor(host string, port int, access Access) string {
	for _, p := range Presets {
		pol := Allowlist{Domains: p.Domains()}
		if pol.AllowsName(host, port, access) {
			return p.Name
		}
	}
	return ""
}
