// `ffn-lab serve`'s API, driven over HTTP in-process: a session trains as
// `sweep` trains the same config (its final RMSE bit for bit), pauses and
// steps when asked, says when it diverges, and bad parameters get a 400
// with the CLI's one line.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/error.h"
#include "experiments/registry.h"
#include "experiments/width_sweep/width_sweep.h"
#include "runner/config.h"
#include "experiments/width_sweep/live.h"
#include "serve/server.h"
#include "serve/serving.h"

using namespace ffn;
using serve::Json;
using tests::Running;


TEST_CASE("serve: the page's parameters become the width sweep's config, and bad ones are refused in one line") {
    const Json defaults = experiments::width_sweep::live_config(Json::object());
    CHECK(defaults["experiment"] == "width_sweep");
    CHECK(defaults["target"] == "sin(3*x)");
    CHECK(defaults["model"]["width"] == 8);
    CHECK(defaults["steps"] == 5000);
    CHECK(defaults["seeds"] == Json::array({0}));
    CHECK(experiments::width_sweep::live_config({{"model.width", 1}, {"seed", 7}})["seeds"] == Json::array({7}));
    auto message = [](const Json& page) {
        try {
            experiments::width_sweep::live_config(page);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message({{"widht", 3}}).starts_with("unknown key 'widht'"));
    CHECK(message({{"model.width", 65}}) == "key 'model.width': at most 64 on the page (65 given); `ffn-lab sweep` takes more");
    CHECK(message({{"model.width", 0}}).find("key 'model.width'") != std::string::npos);
    CHECK(message({{"lr", "fast"}}).find("key 'lr': expected a number") != std::string::npos);
    CHECK(message({{"activation", "swish"}}).find("key 'activation'") != std::string::npos);
    CHECK(message({{"target", "sin(3*"}}).find("key 'target': cannot read") != std::string::npos);
    // A CSV's points, as the page sends them: the config holds them, and the
    // same checks as sweep's apply, with the page's bound on their count.
    const Json points = {{"target", "points"}, {"points", {{-1, 0.5}, {0, 0}, {1, 0.5}}}, {"samples", 3}, {"interval", {-1, 1}}};
    CHECK(experiments::width_sweep::live_config(points)["points"] == Json::parse("[[-1, 0.5], [0, 0], [1, 0.5]]"));
    Json unsorted = points;
    unsorted["points"] = {{0, 0}, {-1, 0.5}, {1, 0.5}};
    CHECK(message(unsorted).find("key 'points': row 2 ([-1, 0.5]): x below the row before (0)") != std::string::npos);
    Json many = points;
    many["points"] = Json::array();
    for (int i = 0; i < 2001; ++i) many["points"].push_back({i / 2001.0, 0.0});
    CHECK(message(many) == "key 'points': at most 2000 on the page (2001 given); `ffn-lab sweep` takes more");
    CHECK(message({{"seed", -1}}) == "key 'seed': expected an integer >= 0, got -1");
    CHECK(message(Json::array()) == "the request: expected a JSON object of parameters");
}

TEST_CASE("serve: a session trained to its budget ends with the RMSE `sweep` gets for its config, bit for bit") {
    Running r;
    const std::string id = r.session({{"model.width", 4}, {"seed", 3}, {"steps", 800}, {"activation", "gelu"}});
    r.post("/api/sessions/" + id + "/advance", {{"to", 800}});
    const Json done = r.state_when(id, [](const Json& s) { return s["status"] == "done"; });
    REQUIRE(done.is_object());
    CHECK(done["step"] == 800);
    // The config the page copies, run the way sweep runs it.
    const auto config = r.client.Get(("/api/sessions/" + id + "/config").c_str());
    REQUIRE(config);
    const runner::Plan plan = runner::make_plan(runner::Json::parse(config->body), "copied", {}, experiments::all_kinds());
    const auto fitted = experiments::width_sweep::fit_width_runs(plan.runs, experiments::width_sweep::make_fit_data(plan.runs.front()));
    CHECK(done["rmse"].get<double>() == fitted.front().rmse);  // exact: the same training, the same bits
    CHECK(done["rmse"].get<double>() < 1);
    CHECK(done["kinks"].is_null());  // GELU has no kinks to count
    CHECK(done["y"].size() == experiments::width_sweep::kGridPoints);
}

TEST_CASE("serve: the config of a paused state (?at=STEP) stops at that step and ends at the RMSE shown, bit for bit") {
    Running r;
    const std::string id = r.session({{"model.width", 4}, {"seed", 3}, {"steps", 800}});
    r.post("/api/sessions/" + id + "/advance", {{"to", 377}});
    const Json paused = r.state_when(id, [](const Json& s) { return s["step"] == 377 && s["status"] == "paused"; });
    REQUIRE(paused.is_object());
    const auto config = r.client.Get(("/api/sessions/" + id + "/config?at=377").c_str());
    REQUIRE(config);
    CHECK(config->status == 200);
    const runner::Plan plan = runner::make_plan(runner::Json::parse(config->body), "copied", {}, experiments::all_kinds());
    CHECK(plan.runs.front().integer("steps") == 377);
    const auto fitted = experiments::width_sweep::fit_width_runs(plan.runs, experiments::width_sweep::make_fit_data(plan.runs.front()));
    CHECK(paused["rmse"].get<double>() == fitted.front().rmse);  // exact: the first 377 steps of any budget are the same
    for (const char* bad : {"801", "-1", "3x", ""}) {
        const auto refused = r.client.Get(("/api/sessions/" + id + "/config?at=" + bad).c_str());
        REQUIRE(refused);
        CHECK(refused->status == 400);
        CHECK(Json::parse(refused->body)["error"] == "'at': expected a step from 0 to 800");
    }
}

TEST_CASE("serve: a session pauses, steps by the count asked, and shows each unit when asked") {
    Running r;
    const std::string id = r.session({{"model.width", 3}, {"units", true}});
    const Json start = r.state_when(id, [](const Json& s) { return s["status"] == "paused"; });
    CHECK(start["step"] == 0);
    CHECK(start["units"].size() == 3);
    CHECK(start["kink_x"].size() <= 3);
    CHECK(start["kinks"].get<int>() == static_cast<int>(start["kink_x"].size()));
    r.post("/api/sessions/" + id + "/step", {{"count", 25}});
    const Json stepped = r.state_when(id, [](const Json& s) { return s["step"] == 25; });
    CHECK(stepped["status"] == "paused");
    CHECK(stepped["curve"].size() >= 1);
    r.post("/api/sessions/" + id + "/train", Json::object());
    const Json running = r.state_when(id, [](const Json& s) { return s["status"] == "running"; });
    CHECK(running["step"].get<long>() > 25);
    r.post("/api/sessions/" + id + "/pause", Json::object());
    const Json paused = r.state_when(id, [](const Json& s) { return s["status"] == "paused"; });
    CHECK(paused["step"].get<long>() < 5000);  // paced at 250 steps a second: far from the budget
}

TEST_CASE("serve: a net that diverges stops and says so - unknown sessions and bad requests get their status") {
    Running r;
    const std::string id = r.session({{"lr", 1e9}, {"optimizer", "sgd"}});
    r.post("/api/sessions/" + id + "/advance", {{"to", 5000}});
    const Json end = r.state_when(id, [](const Json& s) { return s["status"] != "paused" && s["status"] != "running"; });
    CHECK(end["status"] == "diverged");
    CHECK(end["message"].get<std::string>().find("a lower learning rate") != std::string::npos);
    CHECK(end["step"].get<long>() < 5000);

    CHECK(r.post("/api/sessions", {{"model.width", 100}}, 400)["error"] ==
          "key 'model.width': at most 64 on the page (100 given); `ffn-lab sweep` takes more");
    CHECK(r.post("/api/sessions/0123456789abcdef/train", Json::object(), 404)["error"].get<std::string>().starts_with("no such session"));
    CHECK(r.post("/api/sessions/" + id + "/advance", Json::object(), 400)["error"] == "'to': the step to advance to is missing");
    const auto not_json = r.client.Post("/api/sessions", "{width", "application/json");
    REQUIRE(not_json);
    CHECK(not_json->status == 400);
    const auto page = r.client.Get("/");
    REQUIRE(page);
    CHECK(page->status == 200);
    CHECK(page->body.find("<html") != std::string::npos);
    const auto missing = r.client.Get("/etc/passwd");
    REQUIRE(missing);
    CHECK(missing->status == 404);
    const auto options = r.client.Get("/api/options");
    REQUIRE(options);
    const Json o = Json::parse(options->body);
    CHECK(o["max_width"] == experiments::width_sweep::kMaxWidth);
    for (const auto& target : o["targets"]) CHECK_NOTHROW(experiments::width_sweep::live_config({{"target", target}}));
}

TEST_CASE("serve: --experiment names a kind with a live page - another kind, or none, is told apart") {
    const auto refusal = [](const std::string& kind) {
        try {
            serve::Server server({.experiment = kind, .host = "127.0.0.1", .port = 0}, experiments::all_kinds());
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("served");
    };
    CHECK(refusal("width_sweep") == "served");
    CHECK(refusal("layer_lab").starts_with("--experiment layer_lab: no live page for it (these have a live page: width_sweep"));
    CHECK(refusal("nope").starts_with("--experiment nope: no such experiment kind (these have a live page: width_sweep"));
}

TEST_CASE("serve: a port already taken is refused in one line") {
    Running r;
    try {
        serve::Server second({.host = "127.0.0.1", .port = r.server.port()}, experiments::all_kinds());
        FAIL("a second server listened on the same port");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "--host 127.0.0.1 --port " + std::to_string(r.server.port()) +
                                           ": cannot listen there (the port in use, or not this machine's address)");
    }
}

TEST_CASE("serve: hostile requests get a status, never the server: bytes not UTF-8, other hosts, other bodies, closed sessions") {
    Running r;
    const auto bad_path = r.client.Get("/%ff%fe");
    REQUIRE(bad_path);
    CHECK(bad_path->status == 404);
    const auto bad_body = r.client.Post("/api/sessions", "{\"target\": \"\xff\"}", "application/json");
    REQUIRE(bad_body);
    CHECK(bad_body->status == 400);
    const auto huge = r.client.Post("/api/sessions", "{\"lr\": 1e400}", "application/json");
    REQUIRE(huge);
    CHECK(huge->status == 400);
    CHECK(huge->body.find("the request body: invalid JSON") != std::string::npos);
    // Read as a config file is: a repeated key is refused, and no parser's
    // internal names reach the client.
    const auto twice = r.client.Post("/api/sessions", R"({"lr": 0.1, "lr": 0.2})", "application/json");
    REQUIRE(twice);
    CHECK(twice->status == 400);
    CHECK(twice->body.find("key 'lr' appears twice in one object") != std::string::npos);
    const auto broken = r.client.Post("/api/sessions", "{width", "application/json");
    REQUIRE(broken);
    CHECK(broken->body.find("the request body") != std::string::npos);
    CHECK(broken->body.find("json.exception") == std::string::npos);
    // A method the address does not take: 405, with the ones it does.
    const auto wrong_method = r.client.Delete("/api/options");
    REQUIRE(wrong_method);
    CHECK(wrong_method->status == 405);
    CHECK(wrong_method->get_header_value("Allow") == "GET, HEAD");
    CHECK(wrong_method->body.find("DELETE /api/options: this address takes GET, HEAD") != std::string::npos);
    const auto form = r.client.Post("/api/sessions", "width=3", "application/x-www-form-urlencoded");
    REQUIRE(form);
    CHECK(form->status == 415);
    const auto rebound = r.client.Get("/api/options", {{"Host", "evil.example:" + std::to_string(r.server.port())}});
    REQUIRE(rebound);
    CHECK(rebound->status == 403);
    // Still serving, and a target with no value at a drawn point (x = 0)
    // but one at every sample trains.
    const std::string id = r.session({{"target", "1/x"}, {"interval", {-2, 2}}});
    const auto closed = r.client.Delete(("/api/sessions/" + id).c_str());
    REQUIRE(closed);
    CHECK(closed->status == 200);
    const auto gone = r.client.Get(("/api/sessions/" + id + "/events").c_str());
    REQUIRE(gone);
    CHECK(gone->status == 404);
}

TEST_CASE("serve: loopback is an address, not a spelling - 127.0.0.2 keeps the Host check, two Host headers are a 400") {
    CHECK(serve::is_loopback_host("127.0.0.1"));
    CHECK(serve::is_loopback_host("127.1.2.3"));
    CHECK(serve::is_loopback_host("::1"));
    CHECK(serve::is_loopback_host("::ffff:127.0.0.1"));
    CHECK(serve::is_loopback_host("localhost"));
    CHECK_FALSE(serve::is_loopback_host("0.0.0.0"));
    CHECK_FALSE(serve::is_loopback_host("128.0.0.1"));
    CHECK_FALSE(serve::is_loopback_host("::"));
    for (const char* bad : {"", "example.org", "127.0.0.1 ", "1.2.3"})
        CHECK_THROWS_WITH_AS(serve::is_loopback_host(bad),
                             ("--host '" + std::string(bad) + "': expected an IP address (127.0.0.1, ::1, 0.0.0.0, 192.168.1.5 ...) or localhost").c_str(),
                             Error);
    // Any address of 127.0.0.0/8 answers to its own name and the loopback
    // names only: a rebound DNS name is refused.
    Running r(250, "127.0.0.2");
    const std::string port = ":" + std::to_string(r.server.port());
    const auto rebound = r.client.Get("/api/options", {{"Host", "evil.example" + port}});
    REQUIRE(rebound);
    CHECK(rebound->status == 403);
    for (const char* name : {"127.0.0.2", "127.0.0.1", "localhost"}) {
        const auto own = r.client.Get("/api/options", {{"Host", std::string(name) + port}});
        REQUIRE(own);
        CHECK(own->status == 200);
    }
    httplib::Headers two = {{"Host", "127.0.0.2" + port}, {"Host", "evil.example" + port}};
    const auto doubled = r.client.Get("/api/options", two);
    REQUIRE(doubled);
    CHECK(doubled->status == 400);
}

TEST_CASE("serve: each unit's contribution can be asked for after training ended") {
    Running r;
    const std::string id = r.session({{"model.width", 2}, {"steps", 50}});
    r.post("/api/sessions/" + id + "/advance", {{"to", 50}});
    const Json done = r.state_when(id, [](const Json& s) { return s["status"] == "done"; });
    CHECK_FALSE(done.contains("units"));
    r.post("/api/sessions/" + id + "/units", {{"on", true}});
    const Json drawn = r.state_when(id, [](const Json& s) { return s.contains("units"); });
    CHECK(drawn["units"].size() == 2);
    CHECK(drawn["status"] == "done");
    CHECK(drawn["rmse"] == done["rmse"]);
}

TEST_CASE("serve: at most kMaxSessions sessions at once - a closed one makes room") {
    Running r;
    std::vector<std::string> ids;
    for (std::size_t k = 0; k < serve::kMaxSessions; ++k) ids.push_back(r.session({{"seed", static_cast<int>(k)}}));
    CHECK(r.post("/api/sessions", Json::object(), 503)["error"].get<std::string>().starts_with("16 sessions are open"));
    REQUIRE(r.client.Delete(("/api/sessions/" + ids.front()).c_str()));
    CHECK_NOTHROW(r.session(Json::object()));
}
