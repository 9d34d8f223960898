// GraphiQL against this server's /graphql, with the API key from the field above it.
// The key stays in this tab (sessionStorage), never in GraphiQL's saved headers.
(function () {
  "use strict";
  var STORE = "graphmem-api-key";
  var input = document.getElementById("gm-key");
  var status = document.getElementById("gm-status");
  var endpoint = new URL("/graphql", window.location.href).toString();
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  var DEFAULT_QUERY = [
    "# API key above; run with Ctrl-Enter.",
    "# Docs (top left) browse the schema.",
    "query Status {",
    '  memoryStatus(sessionId: "demo") {',
    "    hot { items tokens limit }",
    "    warm { items tokens }",
    "    cold { items tokens }",
    "  }",
    "}",
    "",
  ].join("\n");

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "gm-bad" : "";
  }

  function fetcherFor(key) {
    return function (params, options) {
      var headers = Object.assign({}, (options && options.headers) || {}, {
        "Content-Type": "application/json",
        Accept: "application/json",
      });
      if (key) headers.Authorization = "Bearer " + key;
      return fetch(endpoint, { method: "POST", headers: headers, body: JSON.stringify(params) })
        .then(function (response) {
          if (response.status === 401) say(key ? "unknown API key" : "enter an API key", true);
          else say(key ? "key accepted" : "", false);
          return response.json();
        });
    };
  }

  // A new fetcher makes GraphiQL introspect again: the docs follow the key.
  function render() {
    var key = input.value.trim();
    root.render(
      React.createElement(GraphiQL, {
        fetcher: fetcherFor(key),
        defaultQuery: DEFAULT_QUERY,
        defaultEditorToolsVisibility: false,
        shouldPersistHeaders: false,
      })
    );
  }

  input.value = window.sessionStorage.getItem(STORE) || "";
  input.addEventListener("change", function () {
    window.sessionStorage.setItem(STORE, input.value.trim());
    render();
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter") input.blur();
  });
  render();
})();
