//! `firewall-check`: dump, analyze and compare TCP captures to find tampering middleboxes.
