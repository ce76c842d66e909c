/* The pod sandbox ("pause") process: sleeps, reaps zombies, exits on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void die(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction a = {0};
  a.sa_handler = die; sigaction(SIGINT, &a, NULL); sigaction(SIGTERM, &a, NULL);
  a.sa_handler = reap; a.sa_flags = SA_NOCLDSTOP; sigaction(SIGCHLD, &a, NULL);
  for (;;) pause();
}
