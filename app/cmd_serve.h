#pragma once
#include <CLI/CLI.hpp>

#include "serve/server.h"

namespace ffn::app {

struct ServeOptions {
    serve::ServeOptions server;
    bool open = false;
};

CLI::App* setup_serve(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

}  // namespace ffn::app
