// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @notice A contract account that, when paid ETH, calls `target` again with `data` once and
/// records how that re-entry ended. It can also act (post, claim, withdraw) through `exec`.
contract ReentrantReceiver {
    address public target;
    bytes public data;
    bool public reentered;
    bool public reentryOk;
    bytes public reentryResult;
    uint256 public received;

    function arm(address target_, bytes calldata data_) external {
        target = target_;
        data = data_;
    }

    function exec(address to, uint256 value, bytes calldata call) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        received += msg.value;
        if (target != address(0) && !reentered) {
            reentered = true;
            (reentryOk, reentryResult) = target.call(data);
        }
    }
}

/// @notice A contract account that refuses ETH while `refusing` is set, and acts through `exec`.
contract RejectingReceiver {
    bool public refusing = true;

    function setRefusing(bool r) external {
        refusing = r;
    }

    function exec(address to, uint256 value, bytes calldata call) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        require(!refusing, "no ETH here");
    }
}

/// @notice A contract account whose receive burns more gas than a pushed payment allows.
contract GasGuzzler {
    uint256[] private sink;

    function exec(address to, uint256 value, bytes calldata call) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        for (uint256 i = 0; i < 10; i++) {
            sink.push(i); // ~22,000 gas each
        }
    }
}
