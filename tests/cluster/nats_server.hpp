#pragma once
// A real nats-server with JetStream for the cluster tests: on a free loopback port, with its store
// in a fresh temporary folder, started and stopped by its own process id.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <scenert/cluster/nats_link.hpp>

namespace scenert::cluster::test {

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("nats_server: no free loopback port");
  ::close(fd);
  return ntohs(a.sin_port);
}

inline bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

class nats_server {
 public:
  nats_server() : port_(free_port()) {
    char dir[] = "/tmp/scenert-nats-XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw std::runtime_error("nats_server: mkdtemp failed");
    dir_ = dir;
    start();
  }
  ~nats_server() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  nats_server(const nats_server&) = delete;
  nats_server& operator=(const nats_server&) = delete;

  [[nodiscard]] std::string url() const { return fmt::format("nats://127.0.0.1:{}", port_); }

  /// Starts it (again: same port, same store) and waits until it accepts, at most 10 s.
  void start() {
    const std::string exe =
        std::filesystem::exists("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
    const std::string port = std::to_string(port_), store = dir_ + "/store", log = dir_ + "/server.log";
    std::vector<std::string> args{exe, "-js", "-a", "127.0.0.1", "-p", port, "-sd", store, "-l", log};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = spawn_tied(argv);
    if (pid_ <= 0)
      throw std::runtime_error("nats_server: cannot start nats-server (is Debian's nats-server installed?)");
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(std::chrono::milliseconds(20)))
      if (accepts(port_)) return;
    stop();
    throw std::runtime_error("nats_server: nats-server did not accept within 10 s; see " + log);
  }

  /// Stops it by its own process id and reaps it.
  void stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  // Starts `argv` tied to this process: the kernel kills it when the thread that started it ends
  // (PR_SET_PDEATHSIG), so a test or bench killed before its destructor ran leaves no server
  // listening. Start it from a thread that outlives it (the tests' and benches' main thread).
  // -1 when it could not be run (the exec's error comes back through a close-on-exec pipe).
  static pid_t spawn_tied(std::vector<char*>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before the tie was made
      ::execvp(argv[0], argv.data());
      const int err = errno;
      (void)!::write(fds[1], &err, sizeof err);
      ::_exit(127);
    }
    ::close(fds[1]);
    int err = 0;
    const bool failed = pid < 0 || ::read(fds[0], &err, sizeof err) > 0;
    ::close(fds[0]);
    if (failed && pid > 0) ::waitpid(pid, nullptr, 0);
    return failed ? -1 : pid;
  }

  int port_;
  std::string dir_;
  pid_t pid_ = -1;
};

/// A link and a bucket, retried while the server's JetStream comes up (at most 10 s).
inline std::pair<std::unique_ptr<nats_link>, kv_bucket> open_bucket(const nats_server& server,
                                                                    const std::string& bucket,
                                                                    const std::string& name = "test") {
  std::string last;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    link_options o;
    o.url = server.url();
    o.name = name;
    auto link = nats_link::connect(o);
    if (!link) {
      last = link.error().message;
      continue;
    }
    auto b = (*link)->bucket(bucket);
    if (b) return {std::move(link).value(), std::move(b).value()};
    last = b.error().message;
  }
  throw std::runtime_error("open_bucket: " + last);
}

}  // namespace scenert::cluster::test
