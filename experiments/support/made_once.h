#pragma once
// What several runs of a sweep need alike and a process makes once: a
// task's data (glu_variants), a trained model (unit_contrast). Runs are
// deterministic, so a value made for a key is the value every run with
// that key would make; the key must hold every setting `make` reads. A run
// that asks for a value being made waits for it rather than making it
// again. The newest values are kept, at most `most` of them and no more
// than `budget` bytes (bytes_of each) beyond the newest; a value dropped is
// made again if a later run asks, to the same bits. A make that throws is
// not kept: each run asking meets the error itself.
#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ffn::experiments {

template <class V>
class MadeOnce {
public:
    MadeOnce(std::size_t most, std::size_t budget, std::function<std::size_t(const V&)> bytes_of)
        : most_(most), budget_(budget), bytes_of_(std::move(bytes_of)) {}

    std::shared_ptr<const V> get(const std::string& key, const std::function<V()>& make) {
        std::promise<std::shared_ptr<const V>> promise;
        Made made;
        bool mine = false;
        {
            const std::lock_guard lock(mutex_);
            for (const Entry& e : recent_)
                if (e.key == key) made = e.made;
            if (!made.valid()) {
                made = promise.get_future().share();
                recent_.push_back({key, made});
                mine = true;
            }
        }
        if (mine) {
            try {
                promise.set_value(std::make_shared<const V>(make()));
                drop_oldest();
            } catch (...) {
                {
                    const std::lock_guard lock(mutex_);
                    std::erase_if(recent_, [&](const Entry& e) { return e.key == key; });
                }
                promise.set_exception(std::current_exception());
            }
        }
        return made.get();
    }

private:
    using Made = std::shared_future<std::shared_ptr<const V>>;
    struct Entry {
        std::string key;
        Made made;
    };

    void drop_oldest() {
        const std::lock_guard lock(mutex_);
        const auto ready = [](const Entry& e) { return e.made.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
        std::size_t kept = 0;
        for (const Entry& e : recent_)
            if (ready(e)) kept += bytes_of_(*e.made.get());
        for (auto it = recent_.begin(); it + 1 < recent_.end() && (recent_.size() > most_ || kept > budget_);) {
            if (!ready(*it)) {
                ++it;
                continue;
            }
            kept -= bytes_of_(*it->made.get());
            it = recent_.erase(it);
        }
    }

    const std::size_t most_, budget_;
    const std::function<std::size_t(const V&)> bytes_of_;
    std::mutex mutex_;
    std::vector<Entry> recent_;  // the newest last
};

}  // namespace ffn::experiments
